#pragma once

#include <QColor>

#include "theme.h"

namespace scalelab {

// What the charts (QtChartsSurface) and the time breakdown's bars (StackedBarsWidget) share,
// so that the tabs look alike on screen and in exports.

// White, or the dark theme's window colour.
inline QColor chart_background(bool dark) {
    return dark ? dark_window_colour() : QColor(Qt::white);
}

}  // namespace scalelab
