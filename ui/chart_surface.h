#pragma once

#include <QColor>
#include <QList>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <memory>

class QPainter;
class QWidget;

namespace scalelab {

// How one series is drawn.
struct SeriesStyle {
    QColor colour;
    qreal width = 2.0;
    bool faint = false;    // drawn light and thin (the raw points behind a smoothed curve)
    bool dashed = false;   // reference lines: the ideal scaling line, the warm-up end marker
    bool markers = false;  // a dot at every point (few points: per-epoch values, device counts)
};

// The one interface chart drawing goes through, so that the chart library (Qt Charts, deprecated
// from Qt 6.10 in favour of Qt Graphs) is used in one implementation file only.
//
// Updates are whole-series: setSeries replaces a series' points in one call (Qt Charts'
// QXYSeries::replace; append() costs O(n) per point). Axes do not follow the data by themselves:
// call fitAxes() after a batch of setSeries calls.
class ChartSurface {
  public:
    virtual ~ChartSurface() = default;

    // The widget that shows the chart.
    virtual QWidget* widget() = 0;

    virtual void setTitle(const QString& title) = 0;
    virtual void setAxisTitles(const QString& x, const QString& y) = 0;
    // A logarithmic y axis; points with y <= 0 are then left out of the drawing.
    virtual void setLogY(bool log) = 0;
    virtual bool logY() const = 0;
    // Adds the series `key`, or replaces its points and style. `legend` names it in the legend;
    // an empty legend keeps it out (faint raw points, markers).
    virtual void setSeries(const QString& key, const QString& legend, const QList<QPointF>& points,
                           const SeriesStyle& style) = 0;
    virtual void removeSeries(const QString& key) = 0;
    virtual void clearSeries() = 0;
    virtual bool hasSeries(const QString& key) const = 0;
    // Sets both axes' ranges to the points of every series (with a small margin).
    virtual void fitAxes() = 0;

    // Draws the chart (title, legend, axes and their labels included) into `target` of
    // `painter`, whatever the widget's size: PNG and SVG export.
    virtual void render(QPainter& painter, const QRectF& target) = 0;
};

// The Qt Charts implementation.
std::unique_ptr<ChartSurface> make_chart_surface(QWidget* parent = nullptr);

}  // namespace scalelab
