#pragma once

#include <QFont>

namespace scalelab {

// `base` at `factor` times its point size: chart titles and legends, the lesson's title, the
// form's notes, presenter mode's larger text.
inline QFont scaled_font(const QFont& base, qreal factor, bool bold = false) {
    QFont font = base;
    font.setPointSizeF(base.pointSizeF() * factor);
    font.setBold(bold);
    return font;
}

}  // namespace scalelab
