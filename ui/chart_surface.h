#pragma once

#include <QColor>
#include <QList>
#include <QPointF>
#include <QRectF>
#include <QString>

#include <memory>
#include <optional>

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

    bool operator==(const SeriesStyle&) const = default;
};

// The one interface chart drawing goes through, so that the chart library (Qt Charts, deprecated
// from Qt 6.10 in favour of Qt Graphs) is used in one implementation file only.
//
// Updates are whole-series: setSeries replaces a series' points in one call (never point by
// point: Qt Charts' append() costs O(n) per point). Axes do not follow the data by themselves:
// call fitAxes() after a batch of setSeries calls; it also ends the batch (an implementation may
// keep series untouched for a batch in a cached drawing).
class ChartSurface {
  public:
    virtual ~ChartSurface() = default;

    // The widget that shows the chart.
    virtual QWidget* widget() = 0;

    virtual void setTitle(const QString& title) = 0;
    virtual void setAxisTitles(const QString& x, const QString& y) = 0;
    // A logarithmic x axis; points with x <= 0 are then left out of the drawing.
    virtual void setLogX(bool log) = 0;
    virtual bool logX() const = 0;
    // A logarithmic y axis; points with y <= 0 are then left out of the drawing.
    virtual void setLogY(bool log) = 0;
    virtual bool logY() const = 0;
    // Adds the series `key`, or replaces its points and style. `legend` names it in the legend;
    // an empty legend keeps it out (faint raw points, markers).
    virtual void setSeries(const QString& key, const QString& legend, const QList<QPointF>& points,
                           const SeriesStyle& style) = 0;
    // A translucent band in the style's colour between the curves `low` and `high` (a group's
    // spread around its mean line), drawn under every line. Shares the keys of setSeries, never
    // has a legend entry; fitAxes() includes both edges and seriesPoints() returns `high` then
    // `low` reversed (its outline).
    virtual void setBand(const QString& key, const QList<QPointF>& low, const QList<QPointF>& high,
                         const SeriesStyle& style) = 0;
    virtual void removeSeries(const QString& key) = 0;
    virtual void clearSeries() = 0;
    virtual bool hasSeries(const QString& key) const = 0;
    // The points of series `key` that are drawn (those given, less any the axes cannot show);
    // empty when there is no such series.
    virtual QList<QPointF> seriesPoints(const QString& key) const = 0;
    // The style series `key` (or line, or label) is drawn in; nothing when there is no such key.
    virtual std::optional<SeriesStyle> seriesStyle(const QString& key) const = 0;
    // The name the legend lists for series `key`; empty when it is not listed or there is no such
    // key.
    virtual QString seriesLegend(const QString& key) const = 0;
    // A vertical line at `x` across the whole height of the plot (the end of warm-up). Shares
    // the keys of setSeries: removeSeries and hasSeries take it too. It never has a legend entry,
    // and fitAxes() includes its x but not the y range it spans.
    virtual void setVerticalLine(const QString& key, qreal x, const SeriesStyle& style) = 0;
    // A horizontal line at `y` across the whole width of the plot (a run's global batch on the
    // noise-scale chart). Shares the keys of setSeries, never has a legend entry, and fitAxes()
    // includes its y but not the x range it spans.
    virtual void setHorizontalLine(const QString& key, qreal y, const SeriesStyle& style) = 0;
    // A dot at `at` with `text` written beside it (a run's annotation: "diverged at step 412"),
    // in the style's colour on the chart's background, kept inside the plot area. Labels never
    // cover each other or a dot: a label with no room beside its dot goes further away (a thin
    // line joins it to its dot), else its text is elided, else only its dot is drawn; the whole
    // text then shows when the pointer rests on it. Shares the keys of setSeries, never has a
    // legend entry; fitAxes() includes `at`.
    virtual void setLabel(const QString& key, QPointF at, const QString& text,
                          const SeriesStyle& style) = 0;
    // Sets both axes' ranges to the points of every series (with a small margin); a log axis
    // spans whole powers of ten, or of two for counts within two decades (batches, steps).
    virtual void fitAxes() = 0;

    // Light (default) or dark colours for the background, grid, axes and text; series keep
    // their own colours.
    virtual void setDarkTheme(bool dark) = 0;
    // Scales every font of the chart (title, axes and their tick labels, legend, labels) from its
    // normal size: presenter mode.
    virtual void setFontScale(qreal scale) = 0;
    // Whether the widget draws the legend (by default it does; where it does not fit, see
    // legendFits(), in rows under the plot taking up to half the chart, with as many names as fit
    // there). A drawing by render() always has the legend, every name in it.
    virtual void setLegendShown(bool shown) = 0;
    // Whether the legend fits the widget's chart at its current size, with enough of each name
    // to tell it: under the plot in at most `max_rows` rows and a quarter of the chart's height,
    // or (where no rows fit that quarter) beside it in at most a quarter of its width. True when
    // it lists nothing.
    virtual bool legendFits(int max_rows) const = 0;

    // Draws the chart (title, legend, axes and their labels included) into `target` of
    // `painter`, whatever the widget's size: PNG and SVG export. The legend is always drawn,
    // where it does not fit a quarter of the chart in as many rows as it takes.
    virtual void render(QPainter& painter, const QRectF& target) = 0;
};

// The Qt Charts implementation.
std::unique_ptr<ChartSurface> make_chart_surface(QWidget* parent = nullptr);

}  // namespace scalelab
