#pragma once

#include <QSize>
#include <QString>

namespace scalelab {

class ChartGrid;
class ChartSurface;

// The size of one exported chart at scale 1: pixels in a PNG, user units in an SVG. The grid is
// the charts it shows, in rows as on screen (chart_grid_rows()): the widest row is of charts of
// this size, the charts of a shorter row share its width. Charts are laid out at this size
// whatever their size on screen, so an export looks the same from any window.
inline constexpr QSize chart_export_size{1000, 600};

// Each writes `path` (replacing it only once the whole file is written) and returns true, or
// returns false and sets *error (when given) to a message naming the file and the reason.
// A PNG's `scale` is 1 or 2 (pixels per unit: 2 for high-density screens and slides).
bool export_chart_png(ChartSurface& chart, const QString& path, int scale, QString* error);
bool export_chart_svg(ChartSurface& chart, const QString& path, QString* error);
bool export_grid_png(ChartGrid& grid, const QString& path, int scale, QString* error);
bool export_grid_svg(ChartGrid& grid, const QString& path, QString* error);

}  // namespace scalelab
