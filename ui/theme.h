#pragma once

class QApplication;

namespace scalelab {

enum class Theme { Light, Dark };

// Sets the Fusion style and a light or dark palette for the whole application (charts follow
// through ChartGrid::setDarkTheme).
void apply_theme(QApplication& app, Theme theme);

}  // namespace scalelab
