#pragma once

#include <QFont>
#include <QPointer>

#include <map>
#include <vector>

#include "chart_surface.h"
#include "label_layout.h"
#include "legend_layout.h"

QT_BEGIN_NAMESPACE
class QAbstractAxis;
class QChart;
class QChartView;
class QFontMetricsF;
class QGraphicsItem;
QT_END_NAMESPACE

namespace scalelab {

// ChartSurface on Qt Charts: a QChartView (antialiased, no animations) with a QValueAxis or
// QLogValueAxis for each of x and y, the title, and the legend at the bottom.
//
// Qt Charts lays out and draws the frame (title, axes, grid); the curves are drawn by
// two graphics items of this class inside the plot area, and the labels by a third above them. Qt
// Charts' own QLineSeries recomputes an outline of every curve on each change (QPainterPathStroker,
// for mouse hit tests) and strokes wide pens as one self-crossing path: with 20 runs of 2,000
// points a redraw took over a second. The items instead thin each curve to two points per pixel
// column as they paint, draw wide pens segment by segment, and keep the curves that did not change
// in the last batch in a cached picture, so a live redraw repaints only the run that moved.
//
// The legend is a graphics item of this class too, in room kept free by the chart's margins: Qt
// Charts' legend needs a QLineSeries per entry, and each series with its legend marker held about
// 30 KiB (graphics items, a text document per marker), 15 MiB for a window showing 100 runs.
// It takes at most a quarter of the chart (plan_legend()).
//
// Labels are laid out together (lay_out_labels()) each time they are drawn, so that the window
// and an export each get a layout for their own size and font.
class QtChartsSurface final : public ChartSurface {
  public:
    // A label as last drawn, in the chart's coordinates.
    struct DrawnLabel {
        QString text;   // the whole text
        QString shown;  // the text in its box: the whole, elided, or none
        QColor colour;
        QPointF dot;
        PlacedLabel placed;
    };
    // The labels of one drawing and the plot area they were laid out in.
    struct DrawnLabels {
        QRectF plot;
        std::vector<DrawnLabel> labels;
    };

    explicit QtChartsSurface(QWidget* parent = nullptr);
    // Deletes the view unless its parent widget already did.
    ~QtChartsSurface() override;

    QtChartsSurface(const QtChartsSurface&) = delete;
    QtChartsSurface& operator=(const QtChartsSurface&) = delete;

    QWidget* widget() override;
    void setTitle(const QString& title) override;
    void setAxisTitles(const QString& x, const QString& y) override;
    void setLogX(bool log) override;
    bool logX() const override { return log_x_; }
    void setLogY(bool log) override;
    bool logY() const override { return log_y_; }
    void setSeries(const QString& key, const QString& legend, const QList<QPointF>& points,
                   const SeriesStyle& style) override;
    void setBand(const QString& key, const QList<QPointF>& low, const QList<QPointF>& high,
                 const SeriesStyle& style) override;
    void removeSeries(const QString& key) override;
    void clearSeries() override;
    bool hasSeries(const QString& key) const override;
    QList<QPointF> seriesPoints(const QString& key) const override;
    std::optional<SeriesStyle> seriesStyle(const QString& key) const override;
    QString seriesLegend(const QString& key) const override;
    void setVerticalLine(const QString& key, qreal x, const SeriesStyle& style) override;
    void setHorizontalLine(const QString& key, qreal y, const SeriesStyle& style) override;
    void setLabel(const QString& key, QPointF at, const QString& text,
                  const SeriesStyle& style) override;
    void fitAxes() override;
    void setDarkTheme(bool dark) override;
    void setFontScale(qreal scale) override;
    void setLegendShown(bool shown) override;
    bool legendFits(int max_rows) const override;
    void render(QPainter& painter, const QRectF& target) override;

    // The labels as the last drawing (of the widget, or by render()) laid them out, in the
    // order they were set: what the tests of their layout look at.
    const DrawnLabels& drawnLabels() const;
    // The rectangle the legend's samples and names take in the widget's chart; empty when it
    // draws none.
    QRectF legendArea() const;

  private:
    class PlotAreaItem;
    class PlotLayer;
    class LabelLayer;
    class LegendLayer;

    // Whom the legend is laid out for: the widget draws it where it fits (and is shown), a
    // picture (render()) always.
    enum class LegendUse { Widget, Picture };

    enum class Kind { Curve, Band, VerticalLine, HorizontalLine, Label };

    // The extent of the points a series draws; empty while min > max.
    struct Extent {
        qreal min_x = 1.0;
        qreal max_x = 0.0;
        qreal min_y = 1.0;
        qreal max_y = 0.0;
        bool empty() const { return min_x > max_x; }
    };
    struct Entry {
        QString legend;
        QList<QPointF> points;  // as given (a line's ends are set by fitAxes; a band's outline)
        QList<QPointF> shown;   // the points the axes can show
        SeriesStyle style;
        Kind kind = Kind::Curve;
        qreal line_at = 0.0;  // the x of a vertical line, the y of a horizontal one
        QString text;         // a label's
        Extent extent;        // of `shown`
        // Changed in the current or the last batch: drawn by the uncached layer (labels are
        // always drawn by their own layer).
        bool fresh = true;
        int batch = 0;  // the batch it last changed in
    };
    // The axes' ranges, which map data to the plot area.
    struct Ranges {
        qreal min_x = 0.0;
        qreal max_x = 1.0;
        qreal min_y = 0.0;
        qreal max_y = 1.0;
    };

    // Whether series `key` is a `kind` of entry with these legend, points and style already.
    bool holds(const QString& key, Kind kind, const QString& legend, const QList<QPointF>& points,
               const SeriesStyle& style) const;
    Entry& entry(const QString& key, const SeriesStyle& style);
    void reshape(Entry& entry, Kind kind);
    // Sets a line's ends to span the axes' ranges.
    void placeLine(Entry& entry);
    QGraphicsItem* layerOf(const Entry& entry) const;
    // Repaints every curve and label: the axes moved, or every entry went.
    void updatePlot();
    // Keeps the drawable part of entry.points in entry.shown and marks the entry changed.
    void updateShown(Entry& entry);
    void touch(Entry& entry);
    void applyFonts();
    // The entries the legend lists, in the drawing order.
    std::vector<const Entry*> listed() const;
    static std::vector<qreal> nameWidths(const std::vector<const Entry*>& entries,
                                         const QFontMetricsF& text);
    // Where a legend of names `name_widths` wide goes on the chart at its current size.
    LegendPlan legendPlan(const std::vector<qreal>& name_widths, const LegendSizes& sizes) const;
    // The legend to draw for legend_use_: none where the widget's is hidden.
    LegendPlan drawnLegendPlan(const std::vector<qreal>& name_widths,
                               const LegendSizes& sizes) const;
    // Keeps room for the legend under the plot or at its right, and lays it out there, for
    // legend_use_.
    void placeLegend();
    void applyBackground();
    // Puts `axis` in place of the axis of `orientation` in use (deleted), keeping its title.
    void useAxis(Qt::Orientation orientation, QAbstractAxis* axis);
    QColor background() const;
    // The text's colour in the current theme: the axes' labels'.
    QColor textColour() const;

    QPointer<QChartView> view_;
    QChart* chart_ = nullptr;  // owned by view_
    QAbstractAxis* x_axis_ = nullptr;
    QAbstractAxis* y_axis_ = nullptr;
    PlotLayer* settled_ = nullptr;  // curves unchanged for a batch, cached; owned by chart_
    PlotLayer* fresh_ = nullptr;    // curves changed lately, drawn on each paint
    LabelLayer* labels_ = nullptr;  // labels, above every curve, drawn on each paint
    LegendLayer* legend_ = nullptr;
    QFont legend_font_;  // also the labels'
    bool log_x_ = false;
    bool log_y_ = false;
    bool dark_ = false;
    qreal font_scale_ = 1.0;
    bool legend_shown_ = true;
    LegendUse legend_use_ = LegendUse::Widget;  // a picture's while render() draws one
    Ranges ranges_;
    int batch_ = 0;
    std::map<QString, Entry> entries_;
    std::vector<Entry*> order_;  // creation order: the drawing order
};

}  // namespace scalelab
