#pragma once

#include <QColor>
#include <QList>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QWidget>

#include <vector>

namespace scalelab {

// Horizontal stacked bars painted with QPainter: one bar per label (a device), one segment per
// part (a phase of the step), a legend of the parts above and a value axis below. A dashed
// reference line (the mean step time) marks the whole that a segment's share is counted against;
// a segment's tool tip gives its part, bar, value and that share.
//
// Kept apart from ChartSurface on purpose: that interface draws lines, and Qt Charts (behind it)
// is deprecated; a few rectangles need no chart library.
class StackedBarsWidget : public QWidget {
    Q_OBJECT

  public:
    struct Part {
        QString name;
        QColor colour;
    };

    explicit StackedBarsWidget(QWidget* parent = nullptr);

    // The parts every bar is made of, in stacking and legend order.
    void setParts(const QList<Part>& parts);
    // One bar per label, values[bar][part] in the value unit; a missing value counts as 0.
    void setBars(const QStringList& labels, const std::vector<std::vector<double>>& values);
    // The whole that shares are given of, drawn as a dashed line labelled "<name> <value>";
    // 0 (the default): each bar's own sum, and no line.
    void setReference(double value, const QString& name);
    void setValueUnit(const QString& unit);
    void setValueAxisTitle(const QString& title);
    void setDarkTheme(bool dark);
    void setFontScale(qreal scale);

    const QList<Part>& parts() const { return parts_; }
    const QStringList& labels() const { return labels_; }
    const std::vector<std::vector<double>>& values() const { return values_; }
    double reference() const { return reference_; }
    // Where segment `part` of bar `bar` is drawn; empty when it has no width or does not exist.
    QRectF segmentRect(int bar, int part) const;
    // `value` as the bars label it: "12.3 ms".
    QString formatValue(double value) const;
    // The tool tip shown at `position`: empty away from every segment.
    QString toolTipAt(const QPoint& position) const;

    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

  protected:
    bool event(QEvent* event) override;
    void paintEvent(QPaintEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void leaveEvent(QEvent* event) override;

  private:
    // Where everything goes at the current size and fonts.
    struct Geometry {
        QRectF legend;
        QRectF plot;              // the bars' area: value 0 at its left, axis_maximum at its right
        double below = 0;         // under the plot: the axis, its title and the margin
        double slot = 0;          // the height given to each bar, gap included
        double bar = 0;           // each bar's thickness
        double axis_maximum = 1;  // a round number above every bar and the reference
        double tick_step = 1;
        QList<QRectF> swatches;  // one per part, in the legend
    };
    struct Hit {
        int bar = -1;
        int part = -1;
    };

    QFont scaledFont(qreal factor, bool bold = false) const;
    Geometry geometry() const;
    double barTotal(int bar) const;
    double value(int bar, int part) const;
    // The round step between ticks for an axis up to `maximum` with about `ticks` ticks.
    static double tickStep(double maximum, int ticks);
    Hit hitAt(const QPointF& position) const;
    QRectF segmentRect(const Geometry& geometry, int bar, int part) const;
    // Where the reference line is drawn (the plot's left edge without one).
    double referenceX(const Geometry& geometry) const;

    void paintLegend(QPainter& painter, const Geometry& geometry) const;
    void paintAxis(QPainter& painter, const Geometry& geometry) const;
    void paintBars(QPainter& painter, const Geometry& geometry) const;
    void paintReference(QPainter& painter, const Geometry& geometry) const;

    QColor background() const;
    QColor textColour() const;
    QColor gridColour() const;

    QList<Part> parts_;
    QStringList labels_;
    std::vector<std::vector<double>> values_;
    double reference_ = 0;
    QString reference_name_;
    QString unit_;
    QString axis_title_;
    bool dark_ = false;
    qreal font_scale_ = 1.0;
    Hit hovered_;
};

}  // namespace scalelab
