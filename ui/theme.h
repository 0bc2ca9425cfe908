#pragma once

class QApplication;
class QColor;

namespace scalelab {

enum class Theme { Light, Dark };

// Sets the Fusion style and a light or dark palette for the whole application (charts follow
// through ChartGrid::setDarkTheme).
void apply_theme(QApplication& app, Theme theme);

// The dark theme's window colour, which the charts take for their background too.
QColor dark_window_colour();

}  // namespace scalelab
