#include "run_summary.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>
#include <QStringList>

#include <algorithm>
#include <cmath>

#include "run_spec_json.h"

namespace scalelab {

namespace {

const QString separator = QStringLiteral(" · ");

QString six_digit_text(double value) {
    return QString::number(value, 'g', 6);
}

QString model_text(const RunSpec& spec) {
    const QString model = QString::fromStdString(spec.model);
    return spec.model == "wrn" ? QStringLiteral("%1 k=%2").arg(model).arg(spec.width) : model;
}

// "2×128 = 256", "2×64×4 = 512" with gradient accumulation, or "128 per device".
QString batch_text(const RunSpec& spec, DeviceDetail devices) {
    const QString accumulation =
        spec.accumulation > 1 ? QStringLiteral("×%1").arg(spec.accumulation) : QString();
    if (devices == DeviceDetail::Omitted)
        return QStringLiteral("%1%2 per device").arg(spec.batch).arg(accumulation);
    const long long global = static_cast<long long>(spec.devices) * spec.batch * spec.accumulation;
    return QStringLiteral("%1×%2%3 = %4")
        .arg(spec.devices)
        .arg(spec.batch)
        .arg(accumulation)
        .arg(global);
}

// "1 thread per device", or "all cores shared": what a CPU device is (RunSpec::threads).
QString threads_text(const RunSpec& spec) {
    if (spec.threads == 0)
        return QStringLiteral("all cores shared");
    return spec.threads == 1 ? QStringLiteral("1 thread per device")
                             : QStringLiteral("%1 threads per device").arg(spec.threads);
}

// "sgd lr 0.1", "sgd lr 0.1 (linear → 0.2)"; without devices the effective lr is not fixed, so
// only the rule is named.
QString optimiser_text(const RunSpec& spec, DeviceDetail devices) {
    QString text = QStringLiteral("%1 lr %2")
                       .arg(QString::fromUtf8(to_string(spec.optimizer)), six_digit_text(spec.lr));
    if (spec.lr_scaling == LrScaling::None)
        return text;
    const QString rule = QString::fromUtf8(to_string(spec.lr_scaling));
    if (devices == DeviceDetail::Omitted)
        return text + QStringLiteral(" (%1)").arg(rule);
    return text + QStringLiteral(" (%1 → %2)").arg(rule, six_digit_text(effective_lr(spec)));
}

QString warmup_text(const RunSpec& spec) {
    const bool epochs = spec.warmup_unit == WarmupUnit::Epochs;
    const bool one = spec.warmup_length == 1.0;
    return QStringLiteral("warm-up %1 %2")
        .arg(six_digit_text(spec.warmup_length),
             epochs ? (one ? QStringLiteral("epoch") : QStringLiteral("epochs"))
                    : (one ? QStringLiteral("step") : QStringLiteral("steps")));
}

QString json_value_text(const QJsonValue& value) {
    switch (value.type()) {
        case QJsonValue::Bool:
            return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
        case QJsonValue::Double:
            return six_digit_text(value.toDouble());
        case QJsonValue::String:
            return value.toString().isEmpty() ? QStringLiteral("(empty)") : value.toString();
        case QJsonValue::Array: {
            QStringList items;
            for (const QJsonValue& item : value.toArray())
                items.append(json_value_text(item));
            return items.isEmpty() ? QStringLiteral("(none)") : items.join(QStringLiteral(", "));
        }
        case QJsonValue::Null:
        case QJsonValue::Object:
        case QJsonValue::Undefined:
            break;
    }
    return QStringLiteral("?");
}

}  // namespace

QString configuration_summary(const RunSpec& spec, DeviceDetail devices) {
    QStringList parts{model_text(spec), QString::fromStdString(spec.dataset),
                      batch_text(spec, devices)};
    if (spec.device == DeviceKind::Cpu)
        parts.append(threads_text(spec));
    parts.append(optimiser_text(spec, devices));
    if (spec.schedule != ScheduleKind::Constant)
        parts.append(QString::fromUtf8(to_string(spec.schedule)));
    if (spec.warmup_length > 0)
        parts.append(warmup_text(spec));
    return parts.join(separator);
}

std::vector<std::pair<QString, QString>> differing_settings(const RunSpec& spec,
                                                            const RunSpec& reference) {
    const QJsonObject values = run_spec_to_json(spec);
    const QJsonObject others = run_spec_to_json(reference);
    std::vector<std::pair<QString, QString>> differing;
    for (const QString& key : run_spec_json_keys())
        if (values.value(key) != others.value(key))
            differing.emplace_back(key, json_value_text(values.value(key)));
    return differing;
}

QString non_default_settings(const RunSpec& spec) {
    QStringList lines;
    for (const auto& [key, value] : differing_settings(spec, RunSpec{}))
        lines.append(QStringLiteral("%1: %2").arg(key, value));
    return lines.join(QLatin1Char('\n'));
}

QString whole_number_text(double value) {
    return QLocale(QLocale::English).toString(value, 'f', 0);
}

QString duration_text(double seconds) {
    const long long total = std::llround(std::max(0.0, seconds));
    if (total >= 3600)
        return QStringLiteral("%1:%2:%3")
            .arg(total / 3600)
            .arg(total / 60 % 60, 2, 10, QLatin1Char('0'))
            .arg(total % 60, 2, 10, QLatin1Char('0'));
    return QStringLiteral("%1:%2").arg(total / 60).arg(total % 60, 2, 10, QLatin1Char('0'));
}

}  // namespace scalelab
