#pragma once

#include <QJsonValue>

#include <cmath>
#include <optional>

namespace scalelab {

// JSON has no NaN or infinity: a diverged run's loss becomes null, as does a figure a run did not
// measure.
inline QJsonValue json_number(double value) {
    return std::isfinite(value) ? QJsonValue(value) : QJsonValue(QJsonValue::Null);
}

inline QJsonValue json_number(const std::optional<double>& value) {
    return value ? json_number(*value) : QJsonValue(QJsonValue::Null);
}

}  // namespace scalelab
