#include "chart_export.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSvgGenerator>

#include <algorithm>
#include <functional>
#include <vector>

#include "chart_grid.h"
#include "chart_surface.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

// A chart and where it goes in the exported picture.
struct Placed {
    ChartSurface* chart = nullptr;
    QRectF area;
};

QString tr(const char* text) {
    return QCoreApplication::translate("scalelab::ChartExport", text);
}

bool fail(QString* error, const QString& message) {
    if (error != nullptr)
        *error = message;
    return false;
}

std::vector<Placed> one_chart(ChartSurface& chart) {
    return {{.chart = &chart, .area = QRectF(QPointF(0, 0), chart_export_size)}};
}

std::vector<Placed> grid_charts(ChartGrid& grid) {
    const std::vector<int> rows = chart_grid_rows(int(grid.shownCharts().size()));
    const qreal width = *std::max_element(rows.begin(), rows.end()) * chart_export_size.width();
    std::vector<Placed> placed;
    auto next = grid.shownCharts().begin();
    for (std::size_t row = 0; row < rows.size(); ++row) {
        const QSizeF size(width / rows[row], chart_export_size.height());
        for (int column = 0; column < rows[row]; ++column)
            placed.push_back(
                {.chart = &grid.chart(*next++),
                 .area = QRectF(QPointF(column * size.width(), qreal(row) * size.height()), size)});
    }
    return placed;
}

QSize picture_size(const std::vector<Placed>& charts) {
    QRectF bounds;
    for (const Placed& placed : charts)
        bounds |= placed.area;
    return bounds.size().toSize();
}

void paint(QPainter& painter, const std::vector<Placed>& charts) {
    for (const Placed& placed : charts)
        placed.chart->render(painter, placed.area);
}

// Writes `path` whole or not at all (write_whole_file), or says why it could not.
bool write_file(const QString& path, QString* error, const std::function<bool(QIODevice&)>& write) {
    if (path.isEmpty())
        return fail(error, tr("No file name given for the export."));
    const QString reason = write_whole_file(path, write);
    return reason.isEmpty() || fail(error, tr("Cannot write %1: %2.").arg(path, reason));
}

bool write_png(const std::vector<Placed>& charts, const QString& path, int scale, QString* error) {
    if (scale != 1 && scale != 2)
        return fail(
            error,
            tr("Cannot write %1: the PNG scale must be 1 or 2, not %2.").arg(path).arg(scale));
    // Drawn in chart units on an image `scale` times larger: text and lines grow with it.
    QImage image(picture_size(charts) * scale, QImage::Format_ARGB32_Premultiplied);
    image.setDevicePixelRatio(scale);
    image.fill(Qt::white);
    QPainter painter(&image);
    paint(painter, charts);
    painter.end();

    return write_file(path, error, [&](QIODevice& file) { return image.save(&file, "PNG"); });
}

bool write_svg(const std::vector<Placed>& charts, const QString& path, QString* error) {
    const QSize size = picture_size(charts);
    return write_file(path, error, [&](QIODevice& file) {
        QSvgGenerator svg;
        svg.setOutputDevice(&file);
        svg.setSize(size);
        svg.setViewBox(QRect(QPoint(0, 0), size));
        svg.setTitle(tr("ScaleLab charts"));
        QPainter painter;
        if (!painter.begin(&svg))
            return false;
        paint(painter, charts);
        return painter.end();
    });
}

}  // namespace

bool export_chart_png(ChartSurface& chart, const QString& path, int scale, QString* error) {
    return write_png(one_chart(chart), path, scale, error);
}

bool export_chart_svg(ChartSurface& chart, const QString& path, QString* error) {
    return write_svg(one_chart(chart), path, error);
}

bool export_grid_png(ChartGrid& grid, const QString& path, int scale, QString* error) {
    return write_png(grid_charts(grid), path, scale, error);
}

bool export_grid_svg(ChartGrid& grid, const QString& path, QString* error) {
    return write_svg(grid_charts(grid), path, error);
}

}  // namespace scalelab
