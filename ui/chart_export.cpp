#include "chart_export.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QImage>
#include <QPainter>
#include <QSaveFile>
#include <QSvgGenerator>

#include <algorithm>
#include <vector>

#include "chart_grid.h"
#include "chart_surface.h"

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

// Opens `file` for writing, or says why it cannot be written.
bool open_for_writing(QSaveFile& file, QString* error) {
    const QString path = file.fileName();
    if (path.isEmpty())
        return fail(error, tr("No file name given for the export."));
    const QFileInfo folder(QFileInfo(path).absolutePath());
    if (!folder.isDir())
        return fail(
            error,
            tr("Cannot write %1: the folder %2 does not exist.").arg(path, folder.filePath()));
    if (!folder.isWritable())
        return fail(
            error,
            tr("Cannot write %1: the folder %2 is not writable.").arg(path, folder.filePath()));
    if (!file.open(QIODevice::WriteOnly))
        return fail(error, tr("Cannot write %1: %2.").arg(path, file.errorString()));
    return true;
}

bool commit(QSaveFile& file, QString* error) {
    if (!file.commit())
        return fail(error, tr("Cannot write %1: %2.").arg(file.fileName(), file.errorString()));
    return true;
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

    QSaveFile file(path);
    if (!open_for_writing(file, error))
        return false;
    if (!image.save(&file, "PNG"))
        return fail(error, tr("Cannot write %1: the PNG encoder failed.").arg(path));
    return commit(file, error);
}

bool write_svg(const std::vector<Placed>& charts, const QString& path, QString* error) {
    QSaveFile file(path);
    if (!open_for_writing(file, error))
        return false;
    const QSize size = picture_size(charts);
    QSvgGenerator svg;
    svg.setOutputDevice(&file);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    svg.setTitle(tr("ScaleLab charts"));
    QPainter painter;
    if (!painter.begin(&svg))
        return fail(error, tr("Cannot write %1: the SVG generator did not start.").arg(path));
    paint(painter, charts);
    painter.end();
    return commit(file, error);
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
