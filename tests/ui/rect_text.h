#pragma once

#include <QRectF>
#include <QString>

namespace scalelab::testing {

// A rectangle as "x,y wxh ", for the message of a failed geometry check.
inline QString rect_text(const QRectF& rect) {
    return QStringLiteral("%1,%2 %3x%4 ")
        .arg(rect.x())
        .arg(rect.y())
        .arg(rect.width())
        .arg(rect.height());
}

}  // namespace scalelab::testing
