#pragma once

#include <QColor>

#include "theme.h"

namespace scalelab {

// What the charts (QtChartsSurface) and the time breakdown's bars (StackedBarsWidget) share,
// so that the tabs look alike on screen and in exports.

// The theme's base colour (the background of text fields and tables): white, or the dark
// theme's near-black.
inline QColor chart_background(bool dark) {
    return theme_palette(dark ? Theme::Dark : Theme::Light).color(QPalette::Base);
}

}  // namespace scalelab
