#include "qt_charts_surface.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QGraphicsSceneHoverEvent>
#include <QLegend>
#include <QLogValueAxis>
#include <QPaintEngine>
#include <QPainter>
#include <QPolygonF>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <utility>
#include <vector>

#include "chart_style.h"
#include "colour_contrast.h"
#include "scaled_font.h"

namespace scalelab {

namespace {

constexpr int faint_alpha = 60;
// A band is seen through: the grid, other bands and the lines under it stay visible.
constexpr int band_alpha = 56;
constexpr int leader_alpha = 160;  // a line from a moved label to its dot: seen, but not a curve
constexpr qreal marker_size = 7.0;
constexpr qreal y_margin = 0.05;  // of the data's span, above and below
const QMarginsF edge_margin(marker_size / 2 + 1, marker_size / 2 + 1, marker_size / 2 + 1,
                            marker_size / 2 + 1);
// Above the chart's grid and axes (Qt Charts draws its own series at about 4).
constexpr qreal curves_z = 5.0;
constexpr qreal labels_z = 5.5;
constexpr qreal legend_z = 6.0;
constexpr int frame_margin = 6;  // around the chart's title, axes and legend
// The most of a widget's height a legend that does not fit a quarter of it may take.
constexpr qreal crowded_legend_share = 0.5;
constexpr qreal label_padding = 3.0;  // between a label's text and the edge of its box
constexpr qreal label_gap = 3.0;      // between a label's box and its dot, or another box
// An elided label keeps at least about this many characters.
constexpr qreal label_min_chars = 8.0;

// Beyond this (a diverged loss can get close) the margins and nice numbers of a range overflow.
constexpr qreal largest_drawable = 1e300;

// Whether a value can be placed on an axis (linear or logarithmic).
bool drawable(qreal value, bool log) {
    return std::abs(value) < largest_drawable && (!log || value > 0);
}

bool drawable(QPointF point, bool log_x, bool log_y) {
    return drawable(point.x(), log_x) && drawable(point.y(), log_y);
}

QValueAxis* make_value_axis() {
    auto* axis = new QValueAxis;
    // "%g" instead of Qt's fixed decimals: 10000 rather than 10000.0, 0.0001 rather than 0.00.
    axis->setLabelFormat(QStringLiteral("%g"));
    return axis;
}

QLogValueAxis* make_log_axis() {
    auto* axis = new QLogValueAxis;
    axis->setBase(10.0);
    axis->setLabelFormat(QStringLiteral("%g"));
    axis->setMinorTickCount(8);
    return axis;
}

// The smallest and largest of some values; empty until one is included.
struct Span {
    qreal low = std::numeric_limits<qreal>::infinity();
    qreal high = -std::numeric_limits<qreal>::infinity();
    void include(qreal low_value, qreal high_value) {
        low = std::min(low, low_value);
        high = std::max(high, high_value);
    }
    bool empty() const { return low > high; }
};

// A range of non-zero width around the span for a linear axis; [0, 1] when it is empty.
Span linear_range(Span span, qreal margin) {
    if (span.empty())
        return {0.0, 1.0};
    if (span.low == span.high) {
        const qreal pad = span.low == 0 ? 1.0 : std::abs(span.low) * 0.1;
        return {span.low - pad, span.high + pad};
    }
    const qreal extra = (span.high - span.low) * margin;
    if (!std::isfinite(extra))
        return span;
    // Data that never goes below zero (losses, rates) keeps its axis from going below zero.
    const qreal low = span.low >= 0 ? std::max<qreal>(0, span.low - extra) : span.low - extra;
    return {low, span.high + extra};
}

// A log axis' range: whole powers of its base.
struct LogRange {
    Span span;
    qreal base = 10.0;
};

// Whole powers around a span of positive values; [1, 10] when it is empty. A QLogValueAxis labels
// the powers of its base only, so counts (batches, steps, images) spanning less than two decades
// go in powers of two, which a decade has three of; fractions (losses) keep powers of ten, which
// print short. Counts are often powers of two themselves (batches): a tenth of a power's margin
// keeps them off the axes' ends.
LogRange log_range(Span span) {
    if (span.empty())
        return {{1.0, 10.0}, 10.0};
    const bool binary = span.low >= 1.0 && span.high < 100.0 * span.low;
    const qreal base = binary ? 2.0 : 10.0;
    const qreal margin = binary ? 0.1 : 0.0;
    const auto exponent = [binary](qreal value) {
        return binary ? std::log2(value) : std::log10(value);
    };
    const qreal low = std::pow(base, std::floor(exponent(span.low) - margin));
    qreal high = std::pow(base, std::ceil(exponent(span.high) + margin));
    if (high <= low)
        high = low * base;
    return {{low, high}, base};
}

void set_log_range(QLogValueAxis* axis, LogRange range) {
    if (axis->base() != range.base) {
        axis->setBase(range.base);
        // 2, 3, ... 9 between the powers of ten; none between those of two, a grid line apart.
        axis->setMinorTickCount(range.base == 10.0 ? 8 : 0);
    }
    axis->setRange(range.span.low, range.span.high);
}

// Sets the axis to `range` widened to nice numbers. The nice range is worked out on a scratch
// axis: every change of a shown axis' range lays its labels out again, and applyNiceNumbers() on
// the shown axis would change it twice per fit.
void set_linear_range(QValueAxis* linear, Span range) {
    QValueAxis nice;
    nice.setRange(range.low, range.high);
    nice.applyNiceNumbers();
    if (!(nice.min() < nice.max()))  // a span too narrow for the precision of its values
        nice.setRange(range.low, range.high);
    if (linear->tickCount() != nice.tickCount())
        linear->setTickCount(nice.tickCount());
    linear->setRange(nice.min(), nice.max());
}

// Fits a linear axis to `data` and a margin of its span, a log axis to whole powers around it.
void fit_axis(QAbstractAxis* axis, Span data, qreal margin) {
    if (auto* log = qobject_cast<QLogValueAxis*>(axis))
        set_log_range(log, log_range(data));
    else
        set_linear_range(qobject_cast<QValueAxis*>(axis), linear_range(data, margin));
}

Span axis_range(const QAbstractAxis* axis) {
    if (const auto* linear = qobject_cast<const QValueAxis*>(axis))
        return {linear->min(), linear->max()};
    const auto* log = qobject_cast<const QLogValueAxis*>(axis);
    return {log->min(), log->max()};
}

// `colour` at `alpha` over `background`, as an opaque colour: the faint look without the cost of
// alpha blending every pixel of every segment.
QColor blend(const QColor& colour, const QColor& background, int alpha) {
    const qreal a = alpha / 255.0;
    return QColor::fromRgbF(float(colour.redF() * a + background.redF() * (1 - a)),
                            float(colour.greenF() * a + background.greenF() * (1 - a)),
                            float(colour.blueF() * a + background.blueF() * (1 - a)));
}

// The pen a series is drawn with on `background`.
QPen series_pen(const SeriesStyle& style, const QColor& background) {
    QPen pen(style.faint ? blend(style.colour, background, faint_alpha) : style.colour,
             style.faint ? 1.0 : style.width);
    pen.setStyle(style.dashed ? Qt::DashLine : Qt::SolidLine);
    return pen;
}

// The dot of a marked point, ringed in the background's colour to stand out from the lines.
void draw_marker(QPainter& painter, QPointF centre, const QColor& colour,
                 const QColor& background) {
    const qreal radius = marker_size / 2;
    painter.setPen(QPen(background, 1.0));
    painter.setBrush(colour);
    painter.drawEllipse(centre, radius, radius);
}

// The box that holds `text` whole.
QSizeF label_box_size(const QFontMetricsF& metrics, const QString& text) {
    return {metrics.horizontalAdvance(text) + 2 * label_padding, metrics.height() + label_padding};
}

// The frame of a label's box.
QPen label_frame_pen(const QColor& colour, const QColor& background) {
    return QPen(blend(colour, background, faint_alpha), 1.0);
}

// Data to plot-area coordinates.
class PlotMapping {
  public:
    PlotMapping(const QRectF& area, qreal min_x, qreal max_x, qreal min_y, qreal max_y, bool log_x,
                bool log_y)
        : area_(area),
          log_x_(log_x),
          log_y_(log_y),
          min_x_(log_x ? std::log10(min_x) : min_x),
          min_y_(log_y ? std::log10(min_y) : min_y) {
        const qreal right = log_x ? std::log10(max_x) : max_x;
        const qreal top = log_y ? std::log10(max_y) : max_y;
        x_scale_ = right > min_x_ ? area.width() / (right - min_x_) : 0.0;
        y_scale_ = top > min_y_ ? area.height() / (top - min_y_) : 0.0;
    }

    QPointF map(QPointF value) const {
        const qreal x = log_x_ ? std::log10(value.x()) : value.x();
        const qreal y = log_y_ ? std::log10(value.y()) : value.y();
        return {area_.left() + (x - min_x_) * x_scale_, area_.bottom() - (y - min_y_) * y_scale_};
    }

  private:
    QRectF area_;
    bool log_x_;
    bool log_y_;
    qreal min_x_;
    qreal min_y_;
    qreal x_scale_ = 1.0;
    qreal y_scale_ = 1.0;
};

// Maps `values` to the plot and keeps, of each run of consecutive points in one column `column`
// wide, the highest and the lowest in their order: what a line drawn through all of them covers,
// with at most two points per column however many points there are.
void thin_to_columns(const QList<QPointF>& values, const PlotMapping& mapping, qreal column,
                     QPolygonF& out) {
    out.clear();
    qint64 current = std::numeric_limits<qint64>::min();
    QPointF top;
    QPointF bottom;
    qsizetype top_index = 0;
    qsizetype bottom_index = 0;
    const auto flush = [&] {
        if (current == std::numeric_limits<qint64>::min())
            return;
        out.append(top_index <= bottom_index ? top : bottom);
        if (top_index != bottom_index)
            out.append(top_index <= bottom_index ? bottom : top);
    };
    for (qsizetype i = 0; i < values.size(); ++i) {
        const QPointF point = mapping.map(values[i]);
        const auto point_column = qint64(std::floor(point.x() / column));
        if (point_column != current) {
            flush();
            current = point_column;
            top = bottom = point;
            top_index = bottom_index = i;
            continue;
        }
        if (point.y() < top.y()) {
            top = point;
            top_index = i;
        }
        if (point.y() > bottom.y()) {
            bottom = point;
            bottom_index = i;
        }
    }
    flush();
}

// Drops the points of `line` that lie within `tolerance` of the straight line from the last
// point kept to the next one, as long as that line is at most `reach` long (which bounds how far
// a gentle curve can drift from its drawing). Flat and smooth stretches then cost a few segments.
void drop_straight_points(QPolygonF& line, qreal tolerance, qreal reach) {
    if (line.size() < 3)
        return;
    qsizetype kept = 0;
    for (qsizetype i = 1; i + 1 < line.size(); ++i) {
        const QPointF from = line[kept];
        const QPointF chord = line[i + 1] - from;
        const QPointF offset = line[i] - from;
        const qreal length = std::hypot(chord.x(), chord.y());
        const qreal distance =
            length > 0 ? std::abs(chord.x() * offset.y() - chord.y() * offset.x()) / length
                       : std::hypot(offset.x(), offset.y());
        if (distance > tolerance || length > reach)
            line[++kept] = line[i];
    }
    line[++kept] = line.back();
    line.resize(kept + 1);
}

}  // namespace

// A graphics item that draws into the plot area, and a margin around it for the markers of points
// on its edges.
class QtChartsSurface::PlotAreaItem : public QGraphicsItem {
  public:
    PlotAreaItem(const QtChartsSurface& surface, qreal z, QGraphicsItem* parent)
        : QGraphicsItem(parent), surface_(surface) {
        setZValue(z);
        setAcceptedMouseButtons(Qt::NoButton);
    }

    void setArea(const QRectF& area) {
        if (area == area_)
            return;
        prepareGeometryChange();
        area_ = area;
    }

    QRectF boundingRect() const override { return area_.marginsAdded(edge_margin); }

  protected:
    PlotMapping mapping() const {
        const Ranges& ranges = surface_.ranges_;
        return PlotMapping(area_, ranges.min_x, ranges.max_x, ranges.min_y, ranges.max_y,
                           surface_.log_x_, surface_.log_y_);
    }

    const QtChartsSurface& surface_;
    QRectF area_;
};

// Draws the curves of the entries whose `fresh` flag matches the layer's, faint ones first.
class QtChartsSurface::PlotLayer : public PlotAreaItem {
  public:
    PlotLayer(const QtChartsSurface& surface, bool fresh, QGraphicsItem* parent)
        : PlotAreaItem(surface, curves_z, parent), fresh_(fresh) {}

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        if (area_.isEmpty())
            return;
        const PlotMapping mapping = this->mapping();
        painter->save();
        painter->setClipRect(boundingRect(), Qt::IntersectClip);
        painter->setRenderHint(QPainter::Antialiasing);
        // Thinning works in device pixels (a 2x export keeps twice the detail); pixel painting
        // draws wide lines segment by segment, vector output (SVG) as one polyline.
        const qreal device_scale = std::max<qreal>(std::abs(painter->deviceTransform().m11()), 1);
        const bool raster = painter->paintEngine() != nullptr &&
                            painter->paintEngine()->type() == QPaintEngine::Raster;
        for (const Pass pass : {Pass::Bands, Pass::Faint, Pass::Lines})
            for (const Entry* entry : surface_.order_)
                if (entry->kind != Kind::Label && entry->fresh == fresh_ && passOf(*entry) == pass)
                    draw(*painter, *entry, mapping, device_scale, raster);
        painter->restore();
    }

  private:
    // Bands under faint raw lines under every other line.
    enum class Pass { Bands, Faint, Lines };
    static Pass passOf(const Entry& entry) {
        if (entry.kind == Kind::Band)
            return Pass::Bands;
        return entry.style.faint ? Pass::Faint : Pass::Lines;
    }

    // A band as its envelope in columns two device pixels wide: in each column, from the highest
    // to the lowest point of its outline there. A noisy band's outline zigzags; its envelope is
    // one simple polygon of at most two points per column, which fills in a fraction of the time.
    // Filled without antialiasing: a translucent edge looks the same either way.
    void fill(QPainter& painter, const Entry& entry, const PlotMapping& mapping,
              qreal device_scale) {
        const qreal column = 2.0 / device_scale;
        const qint64 first = qint64(std::floor(area_.left() / column)) - 1;
        const qint64 count = qint64(std::ceil(area_.width() / column)) + 3;
        envelope_.assign(std::size_t(count), {std::numeric_limits<qreal>::infinity(),
                                              -std::numeric_limits<qreal>::infinity()});
        for (const QPointF& value : entry.shown) {
            const QPointF point = mapping.map(value);
            const qint64 at =
                std::clamp<qint64>(qint64(std::floor(point.x() / column)) - first, 0, count - 1);
            envelope_[std::size_t(at)].first =
                std::min(envelope_[std::size_t(at)].first, point.y());
            envelope_[std::size_t(at)].second =
                std::max(envelope_[std::size_t(at)].second, point.y());
        }
        polygon_.clear();
        for (qint64 at = 0; at < count; ++at)
            if (envelope_[std::size_t(at)].first <= envelope_[std::size_t(at)].second)
                polygon_.append(
                    QPointF(qreal(at + first) * column, envelope_[std::size_t(at)].first));
        for (qint64 at = count - 1; at >= 0; --at)
            if (envelope_[std::size_t(at)].first <= envelope_[std::size_t(at)].second)
                polygon_.append(
                    QPointF(qreal(at + first) * column, envelope_[std::size_t(at)].second));
        QColor colour = entry.style.colour;
        colour.setAlpha(band_alpha);
        painter.setRenderHint(QPainter::Antialiasing, false);
        painter.setPen(Qt::NoPen);
        painter.setBrush(colour);
        painter.drawPolygon(polygon_);
    }

    void draw(QPainter& painter, const Entry& entry, const PlotMapping& mapping, qreal device_scale,
              bool raster) {
        if (entry.shown.isEmpty())
            return;
        if (entry.kind == Kind::Band) {
            fill(painter, entry, mapping, device_scale);
            return;
        }
        const SeriesStyle& style = entry.style;
        const QPen pen = series_pen(style, surface_.background());
        const bool wide = pen.widthF() > 1.0;
        // A wide line covers two pixel columns: thinning to two points per two columns hides
        // nothing it would show.
        thin_to_columns(entry.shown, mapping, (wide ? 2.0 : 1.0) / device_scale, polygon_);
        drop_straight_points(polygon_, 0.25 / device_scale, 8.0 / device_scale);

        // Faint raw lines are one pixel wide and pre-blended: aliased they look the same and
        // cost a fraction of the antialiased stroke.
        painter.setRenderHint(QPainter::Antialiasing, !style.faint);
        painter.setPen(pen);
        painter.setBrush(Qt::NoBrush);
        if (polygon_.size() == 1) {
            painter.drawPoint(polygon_.front());
        } else if (wide && raster && !style.dashed) {
            // The raster engine strokes a wide polyline as one self-crossing outline, which costs
            // about twenty times as much as its segments drawn one by one.
            segments_.clear();
            for (qsizetype i = 1; i < polygon_.size(); ++i)
                segments_.append(QLineF(polygon_[i - 1], polygon_[i]));
            painter.drawLines(segments_);
        } else {
            painter.drawPolyline(polygon_);
        }

        if (style.markers)
            for (const QPointF& value : entry.shown)  // every one, thinned or not
                draw_marker(painter, mapping.map(value), style.colour, surface_.background());
    }

    const bool fresh_;
    QPolygonF polygon_;                              // reused from paint to paint
    std::vector<std::pair<qreal, qreal>> envelope_;  // a band's top and bottom per column
    QList<QLineF> segments_;                         // reused from paint to paint
};

// Draws every label where lay_out_labels() puts it for the painter's font metrics: its text in a
// box of the background's colour (so that no curve cuts through it), a thin line from a moved box
// to its dot, and the dot. Resting the pointer on a dot or box whose text is not all shown shows
// the whole text.
class QtChartsSurface::LabelLayer : public PlotAreaItem {
  public:
    LabelLayer(const QtChartsSurface& surface, QGraphicsItem* parent)
        : PlotAreaItem(surface, labels_z, parent) {
        setAcceptHoverEvents(true);
    }

    const DrawnLabels& drawn() const { return drawn_; }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        drawn_ = {.plot = area_, .labels = {}};
        if (area_.isEmpty())
            return;
        const QFont& font = surface_.legend_font_;
        layOut(QFontMetricsF(font, painter->device()));
        const QColor background = surface_.background();
        painter->save();
        painter->setClipRect(boundingRect(), Qt::IntersectClip);
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setFont(font);
        // Lines first and dots last: a line may pass under another label's box, a dot never is.
        for (const DrawnLabel& label : drawn_.labels)
            if (label.placed.moved) {
                painter->setPen(QPen(blend(label.colour, background, leader_alpha), 1.0));
                painter->drawLine(label.dot, nearest_point(label.placed.box, label.dot));
            }
        for (const DrawnLabel& label : drawn_.labels) {
            if (label.shown.isEmpty())
                continue;
            painter->setPen(label_frame_pen(label.colour, background));
            painter->setBrush(background);
            painter->drawRect(label.placed.box);
            // Text in the series' hue, dark or light enough to read (a line needs 3:1 on the
            // background, text 4.5:1).
            painter->setPen(readable_on(label.colour, background, text_contrast));
            painter->drawText(label.placed.box, Qt::AlignCenter, label.shown);
        }
        for (const DrawnLabel& label : drawn_.labels)
            draw_marker(*painter, label.dot, label.colour, background);
        painter->restore();
    }

  protected:
    void hoverMoveEvent(QGraphicsSceneHoverEvent* event) override {
        setToolTip(hiddenTextAt(event->pos()));
    }

  private:
    // Lays the labels out for text measured by `metrics`, into drawn_.
    void layOut(const QFontMetricsF& metrics) {
        const PlotMapping mapping = this->mapping();
        std::vector<LabelRequest> requests;
        for (const Entry* entry : surface_.order_) {
            if (entry->kind != Kind::Label || entry->shown.isEmpty())
                continue;
            const QPointF dot = mapping.map(entry->shown.front());
            // A label without text is a dot alone: no box to place.
            const QSizeF box =
                entry->text.isEmpty() ? QSizeF() : label_box_size(metrics, entry->text);
            requests.push_back({.dot = dot, .size = box});
            drawn_.labels.push_back({.text = entry->text,
                                     .shown = QString(),
                                     .colour = entry->style.colour,
                                     .dot = dot,
                                     .placed = {}});
        }
        const LabelSpacing spacing{
            .dot_radius = marker_size / 2,
            .gap = label_gap,
            .min_width = label_min_chars * metrics.averageCharWidth() + 2 * label_padding};
        const std::vector<PlacedLabel> placed = lay_out_labels(area_, requests, spacing);
        for (std::size_t i = 0; i < placed.size(); ++i) {
            DrawnLabel& label = drawn_.labels[i];
            label.placed = placed[i];
            if (placed[i].fit == LabelFit::Full)
                label.shown = label.text;
            else if (placed[i].fit == LabelFit::Elided)
                label.shown = metrics.elidedText(label.text, Qt::ElideRight,
                                                 placed[i].box.width() - 2 * label_padding);
        }
    }

    // The whole texts, one a line, of the labels under `point` whose text is not all shown (dots
    // can lie on each other); empty elsewhere.
    QString hiddenTextAt(QPointF point) const {
        const qreal reach = marker_size / 2 + 1;
        QStringList texts;
        for (const DrawnLabel& label : drawn_.labels) {
            const QPointF off = point - label.dot;
            if (label.shown != label.text &&
                (label.placed.box.contains(point) || std::hypot(off.x(), off.y()) <= reach))
                texts.append(label.text);
        }
        return texts.join(QLatin1Char('\n'));
    }

    DrawnLabels drawn_;
};

// Draws the legend as QtChartsSurface::placeLegend() lays it out: for each named entry a sample
// of its line, then its name in the colour of the axes' labels.
class QtChartsSurface::LegendLayer : public QGraphicsItem {
  public:
    struct Item {
        QString name;  // as shown: elided where it would not fit
        SeriesStyle style;
        QLineF sample;
        QRectF name_box;

        bool operator==(const Item&) const = default;
    };

    LegendLayer(const QtChartsSurface& surface, QGraphicsItem* parent)
        : QGraphicsItem(parent), surface_(surface) {
        setZValue(legend_z);
        setAcceptedMouseButtons(Qt::NoButton);
    }

    void setItems(std::vector<Item> items) {
        if (items == items_)
            return;
        QRectF bounds;
        for (const Item& item : items)
            bounds |= QRectF(item.sample.p1(), item.name_box.bottomRight())
                          .normalized()
                          .marginsAdded(edge_margin);
        if (bounds != bounds_) {
            prepareGeometryChange();
            bounds_ = bounds;
        }
        items_ = std::move(items);
        update();
    }

    QRectF boundingRect() const override { return bounds_; }

    // What its samples and names cover.
    QRectF area() const {
        QRectF covered;
        for (const Item& item : items_)
            covered |= QRectF(item.sample.p1(), item.name_box.bottomRight()).normalized();
        return covered;
    }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        const QColor background = surface_.background();
        painter->save();
        painter->setRenderHint(QPainter::Antialiasing);
        painter->setFont(surface_.legend_font_);
        for (const Item& item : items_) {
            painter->setPen(series_pen(item.style, background));
            painter->drawLine(item.sample);
            if (item.style.markers)
                draw_marker(*painter, item.sample.center(), item.style.colour, background);
            painter->setPen(surface_.textColour());
            painter->drawText(item.name_box, Qt::AlignLeft | Qt::AlignVCenter, item.name);
        }
        painter->restore();
    }

  private:
    const QtChartsSurface& surface_;
    std::vector<Item> items_;
    QRectF bounds_;
};

QtChartsSurface::QtChartsSurface(QWidget* parent) {
    chart_ = new QChart;
    // Animations would replay on every live redraw and keep the event loop busy.
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setMargins(QMargins(frame_margin, frame_margin, frame_margin, frame_margin));
    chart_->layout()->setContentsMargins(0, 0, 0, 0);
    chart_->legend()->hide();
    applyBackground();

    settled_ = new PlotLayer(*this, false, chart_);
    // Repainted only when a curve settles in it or the axes move.
    settled_->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    fresh_ = new PlotLayer(*this, true, chart_);
    labels_ = new LabelLayer(*this, chart_);
    legend_ = new LegendLayer(*this, chart_);
    // A new plot area follows any change of the chart's size or margins.
    QObject::connect(chart_, &QChart::plotAreaChanged, chart_, [this](const QRectF& area) {
        for (PlotAreaItem* layer : std::initializer_list<PlotAreaItem*>{settled_, fresh_, labels_})
            layer->setArea(area);
        placeLegend();
    });
    useAxis(Qt::Horizontal, make_value_axis());
    useAxis(Qt::Vertical, make_value_axis());
    applyFonts();

    view_ = new QChartView(chart_, parent);
    view_->setRenderHint(QPainter::Antialiasing);
    // Small enough for the window's four charts, its table and its log to fit a 1024x768
    // projector (test_main_window's opensWithinTheScreen); larger screens give them more.
    view_->setMinimumSize(240, 160);
    fitAxes();
}

QtChartsSurface::~QtChartsSurface() {
    delete view_.data();
}

QWidget* QtChartsSurface::widget() {
    return view_;
}

void QtChartsSurface::setTitle(const QString& title) {
    chart_->setTitle(title);
}

void QtChartsSurface::setAxisTitles(const QString& x, const QString& y) {
    x_axis_->setTitleText(x);
    y_axis_->setTitleText(y);
}

void QtChartsSurface::setLogX(bool log) {
    if (log == log_x_)
        return;
    log_x_ = log;
    useAxis(Qt::Horizontal, log ? static_cast<QAbstractAxis*>(make_log_axis()) : make_value_axis());
    applyFonts();
    // Lines keep their ends until fitAxes() places them on the new axis' range.
    for (Entry* item : order_)
        updateShown(*item);
    fitAxes();
}

void QtChartsSurface::setLogY(bool log) {
    if (log == log_y_)
        return;
    log_y_ = log;
    useAxis(Qt::Vertical, log ? static_cast<QAbstractAxis*>(make_log_axis()) : make_value_axis());
    applyFonts();
    for (Entry* item : order_)
        updateShown(*item);
    fitAxes();
}

void QtChartsSurface::useAxis(Qt::Orientation orientation, QAbstractAxis* axis) {
    QAbstractAxis*& used = orientation == Qt::Horizontal ? x_axis_ : y_axis_;
    if (used != nullptr) {
        axis->setTitleText(used->titleText());
        chart_->removeAxis(used);
        delete used;
    }
    used = axis;
    chart_->addAxis(used, orientation == Qt::Horizontal ? Qt::AlignBottom : Qt::AlignLeft);
}

QtChartsSurface::Entry& QtChartsSurface::entry(const QString& key, const SeriesStyle& style) {
    const auto found = entries_.find(key);
    if (found != entries_.end()) {
        if (!(found->second.style == style)) {
            found->second.style = style;
            touch(found->second);
        }
        return found->second;
    }
    Entry& item = entries_[key];
    item.style = style;
    order_.push_back(&item);
    touch(item);
    return item;
}

// Makes `item` a `kind` of entry; the layer that drew it as another kind draws it no more.
void QtChartsSurface::reshape(Entry& item, Kind kind) {
    if (item.kind == kind)
        return;
    layerOf(item)->update();
    item.kind = kind;
}

void QtChartsSurface::updatePlot() {
    settled_->update();
    fresh_->update();
    labels_->update();
}

QGraphicsItem* QtChartsSurface::layerOf(const Entry& item) const {
    if (item.kind == Kind::Label)
        return labels_;
    return item.fresh ? fresh_ : settled_;
}

// A redraw hands every series of a dirty run over again, changed or not (the chart grid redraws a
// group when any of its members changes, and all runs when the theme or the legend does). One
// given what it already has stays as it is: in the cached layer, not repainted. Comparing 2,000
// points costs microseconds; repainting 20 groups' lines and bands on four charts took ~30 ms.
bool QtChartsSurface::holds(const QString& key, Kind kind, const QString& legend,
                            const QList<QPointF>& points, const SeriesStyle& style) const {
    const auto found = entries_.find(key);
    if (found == entries_.end())
        return false;
    const Entry& item = found->second;
    return item.kind == kind && item.legend == legend && item.style == style &&
           item.points == points;
}

void QtChartsSurface::setSeries(const QString& key, const QString& legend,
                                const QList<QPointF>& points, const SeriesStyle& style) {
    if (holds(key, Kind::Curve, legend, points, style))
        return;
    Entry& item = entry(key, style);
    reshape(item, Kind::Curve);
    item.legend = legend;
    item.points = points;
    updateShown(item);
}

void QtChartsSurface::setBand(const QString& key, const QList<QPointF>& low,
                              const QList<QPointF>& high, const SeriesStyle& style) {
    QList<QPointF> outline;
    outline.reserve(low.size() + high.size());
    outline.append(high);
    std::reverse_copy(low.cbegin(), low.cend(), std::back_inserter(outline));
    if (holds(key, Kind::Band, {}, outline, style))
        return;
    Entry& item = entry(key, style);
    reshape(item, Kind::Band);
    item.legend.clear();
    item.points = std::move(outline);
    updateShown(item);
}

void QtChartsSurface::updateShown(Entry& item) {
    const auto keep = [this](QPointF point) { return drawable(point, log_x_, log_y_); };
    if (std::all_of(item.points.cbegin(), item.points.cend(), keep)) {
        item.shown = item.points;  // shared, not copied
    } else {
        item.shown.clear();
        std::copy_if(item.points.cbegin(), item.points.cend(), std::back_inserter(item.shown),
                     keep);
    }
    item.extent = {};
    for (const QPointF point : std::as_const(item.shown)) {
        if (item.extent.empty()) {
            item.extent = {point.x(), point.x(), point.y(), point.y()};
            continue;
        }
        item.extent.min_x = std::min(item.extent.min_x, point.x());
        item.extent.max_x = std::max(item.extent.max_x, point.x());
        item.extent.min_y = std::min(item.extent.min_y, point.y());
        item.extent.max_y = std::max(item.extent.max_y, point.y());
    }
    touch(item);
}

// The entry changed in this batch: it is drawn by the fresh layer until a batch passes
// without a change to it.
void QtChartsSurface::touch(Entry& item) {
    if (item.kind == Kind::Label) {
        labels_->update();
        return;
    }
    if (!item.fresh)
        settled_->update();
    item.fresh = true;
    item.batch = batch_;
    fresh_->update();
}

void QtChartsSurface::removeSeries(const QString& key) {
    const auto found = entries_.find(key);
    if (found == entries_.end())
        return;
    Entry& item = found->second;
    layerOf(item)->update();
    const bool listed = !item.legend.isEmpty();
    std::erase(order_, &item);
    entries_.erase(found);
    if (listed)
        placeLegend();
}

void QtChartsSurface::clearSeries() {
    order_.clear();
    entries_.clear();
    updatePlot();
    placeLegend();
}

bool QtChartsSurface::hasSeries(const QString& key) const {
    return entries_.contains(key);
}

QList<QPointF> QtChartsSurface::seriesPoints(const QString& key) const {
    const auto found = entries_.find(key);
    return found == entries_.end() ? QList<QPointF>() : found->second.shown;
}

std::optional<SeriesStyle> QtChartsSurface::seriesStyle(const QString& key) const {
    const auto found = entries_.find(key);
    if (found == entries_.end())
        return std::nullopt;
    return found->second.style;
}

QString QtChartsSurface::seriesLegend(const QString& key) const {
    const auto found = entries_.find(key);
    return found == entries_.end() ? QString() : found->second.legend;
}

void QtChartsSurface::setVerticalLine(const QString& key, qreal x, const SeriesStyle& style) {
    Entry& item = entry(key, style);
    reshape(item, Kind::VerticalLine);
    item.legend.clear();
    item.line_at = x;
    placeLine(item);
}

void QtChartsSurface::setHorizontalLine(const QString& key, qreal y, const SeriesStyle& style) {
    Entry& item = entry(key, style);
    reshape(item, Kind::HorizontalLine);
    item.legend.clear();
    item.line_at = y;
    placeLine(item);
}

void QtChartsSurface::placeLine(Entry& item) {
    const qreal at = item.line_at;
    const QList<QPointF> ends =
        item.kind == Kind::VerticalLine
            ? QList<QPointF>{QPointF(at, ranges_.min_y), QPointF(at, ranges_.max_y)}
            : QList<QPointF>{QPointF(ranges_.min_x, at), QPointF(ranges_.max_x, at)};
    if (item.points == ends)
        return;
    item.points = ends;
    updateShown(item);
}

void QtChartsSurface::setLabel(const QString& key, QPointF at, const QString& text,
                               const SeriesStyle& style) {
    Entry& item = entry(key, style);
    reshape(item, Kind::Label);
    item.legend.clear();
    item.text = text;
    item.points = {at};
    updateShown(item);
}

void QtChartsSurface::fitAxes() {
    Span x;
    Span y;
    for (const Entry* item : order_) {
        switch (item->kind) {
            case Kind::Curve:
            case Kind::Band:
            case Kind::Label:
                if (!item->extent.empty()) {
                    x.include(item->extent.min_x, item->extent.max_x);
                    y.include(item->extent.min_y, item->extent.max_y);
                }
                break;
            case Kind::VerticalLine:
                if (drawable(item->line_at, log_x_))
                    x.include(item->line_at, item->line_at);
                break;
            case Kind::HorizontalLine:
                if (drawable(item->line_at, log_y_))
                    y.include(item->line_at, item->line_at);
                break;
        }
    }
    // Progress (steps, epochs, samples, seconds, devices) reads best from zero: a linear x axis
    // starts there when that at most doubles its range.
    if (!log_x_ && !x.empty() && x.low > 0 && x.low <= x.high - x.low)
        x.low = 0;
    fit_axis(x_axis_, x, 0.0);
    fit_axis(y_axis_, y, y_margin);

    const Span shown_x = axis_range(x_axis_);
    const Span shown_y = axis_range(y_axis_);
    const Ranges ranges{
        .min_x = shown_x.low, .max_x = shown_x.high, .min_y = shown_y.low, .max_y = shown_y.high};
    if (ranges.min_x != ranges_.min_x || ranges.max_x != ranges_.max_x ||
        ranges.min_y != ranges_.min_y || ranges.max_y != ranges_.max_y) {
        ranges_ = ranges;
        updatePlot();
    }
    // Lines span the ranges just chosen.
    for (Entry* item : order_)
        if (item->kind == Kind::VerticalLine || item->kind == Kind::HorizontalLine)
            placeLine(*item);

    // The batch ends: curves that did not change in it move to the cached layer.
    bool settled_more = false;
    for (Entry* item : order_) {
        if (item->kind != Kind::Label && item->fresh && item->batch != batch_) {
            item->fresh = false;
            settled_more = true;
        }
    }
    if (settled_more) {
        settled_->update();
        fresh_->update();
    }
    ++batch_;
    placeLegend();
}

std::vector<const QtChartsSurface::Entry*> QtChartsSurface::listed() const {
    std::vector<const Entry*> entries;
    for (const Entry* entry : order_)
        if (!entry->legend.isEmpty())
            entries.push_back(entry);
    return entries;
}

std::vector<qreal> QtChartsSurface::nameWidths(const std::vector<const Entry*>& entries,
                                               const QFontMetricsF& text) {
    std::vector<qreal> widths;
    widths.reserve(entries.size());
    for (const Entry* entry : entries)
        widths.push_back(text.horizontalAdvance(entry->legend));
    return widths;
}

LegendPlan QtChartsSurface::legendPlan(const std::vector<qreal>& name_widths,
                                       const LegendSizes& sizes) const {
    const QSizeF size = chart_->size();
    // A column beside the plot starts at its top and may reach the chart's bottom edge.
    return plan_legend(name_widths, size, size.height() - chart_->plotArea().top() - frame_margin,
                       sizes);
}

bool QtChartsSurface::legendFits(int max_rows) const {
    const QFontMetricsF text(legend_font_);
    const std::vector<qreal> names = nameWidths(listed(), text);
    const LegendPlan plan = legendPlan(names, legend_sizes(text, frame_margin));
    return names.empty() || plan.place == LegendPlace::Beside ||
           (plan.place == LegendPlace::Below && plan.rows.size() <= std::size_t(max_rows));
}

// A legend that does not fit a quarter of the chart takes as many rows as it needs in a picture,
// and in the widget (where ChartGrid did not move it out) as many as fit a share of its height.
LegendPlan QtChartsSurface::drawnLegendPlan(const std::vector<qreal>& name_widths,
                                            const LegendSizes& sizes) const {
    const bool picture = legend_use_ == LegendUse::Picture;
    if (!picture && !legend_shown_)
        return {};
    const LegendPlan plan = legendPlan(name_widths, sizes);
    if (plan.place != LegendPlace::Nowhere)
        return plan;
    const QSizeF size = chart_->size();
    return plan_legend_rows(
        name_widths, size.width(),
        picture ? std::numeric_limits<qreal>::infinity() : size.height() * crowded_legend_share,
        sizes);
}

// Rows under the plot, each centred under it as far as the chart's width allows, or a column at
// its right from its top; the chart's margins keep the room free, so the plot area shrinks by it.
void QtChartsSurface::placeLegend() {
    const QFontMetricsF text(legend_font_);
    const LegendSizes sizes = legend_sizes(text, frame_margin);
    const std::vector<const Entry*> entries = listed();
    const std::vector<qreal> names = nameWidths(entries, text);
    const LegendPlan plan = drawnLegendPlan(names, sizes);
    const QSizeF size = chart_->size();
    QMargins margins(frame_margin, frame_margin, frame_margin, frame_margin);
    if (plan.place == LegendPlace::Below)
        margins.setBottom(frame_margin + int(std::ceil(plan.size.height())));
    else if (plan.place == LegendPlace::Beside)
        margins.setRight(frame_margin + int(std::ceil(plan.size.width())));
    if (chart_->margins() != margins)
        chart_->setMargins(margins);

    const QRectF plot = chart_->plotArea();
    const auto row_start = [&](std::size_t r) {
        if (plan.place == LegendPlace::Beside)
            return QPointF(size.width() - margins.right() + 2 * sizes.gap,
                           plot.top() + qreal(r) * sizes.line);
        const qreal width = plan.rows[r].width;
        return QPointF(
            std::clamp(plot.center().x() - width / 2, qreal(frame_margin),
                       std::max<qreal>(frame_margin, size.width() - frame_margin - width)),
            size.height() - frame_margin - qreal(plan.rows.size() - r) * sizes.line);
    };
    std::vector<LegendLayer::Item> items;
    for (std::size_t r = 0; r < plan.rows.size(); ++r) {
        const LegendRow& row = plan.rows[r];
        const std::vector<LegendSlot> entry_slots =
            place_legend_row(row, row_start(r), names, plan.name_width, sizes);
        for (std::size_t i = 0; i < row.count; ++i) {
            const Entry& entry = *entries[row.first + i];
            items.push_back({.name = text.elidedText(entry.legend, Qt::ElideMiddle,
                                                     entry_slots[i].name_box.width()),
                             .style = entry.style,
                             .sample = entry_slots[i].sample,
                             .name_box = entry_slots[i].name_box});
        }
    }
    legend_->setItems(std::move(items));
}

void QtChartsSurface::setLegendShown(bool shown) {
    if (shown == legend_shown_)
        return;
    legend_shown_ = shown;
    placeLegend();
}

const QtChartsSurface::DrawnLabels& QtChartsSurface::drawnLabels() const {
    return labels_->drawn();
}

QRectF QtChartsSurface::legendArea() const {
    return legend_->area();
}

void QtChartsSurface::setDarkTheme(bool dark) {
    dark_ = dark;
    // A theme resets the fonts, the background and every series' pen: apply ours again.
    chart_->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    applyBackground();
    applyFonts();
    // Faint colours are blended with the background.
    for (Entry* item : order_)
        touch(*item);
    settled_->update();
    legend_->update();  // its text takes the theme's colour
}

QColor QtChartsSurface::textColour() const {
    return x_axis_->labelsBrush().color();
}

QColor QtChartsSurface::background() const {
    return chart_background(dark_);
}

// A flat background in both themes, so that faint colours can be blended with it.
void QtChartsSurface::applyBackground() {
    chart_->setBackgroundRoundness(0);
    chart_->setBackgroundBrush(background());
    chart_->setPlotAreaBackgroundVisible(false);
}

void QtChartsSurface::setFontScale(qreal scale) {
    font_scale_ = scale;
    applyFonts();
    labels_->update();  // labels are written in the legend's font
}

void QtChartsSurface::applyFonts() {
    const QFont base = QApplication::font();
    chart_->setTitleFont(scaled_font(base, 1.25 * font_scale_, true));
    legend_font_ = scaled_font(base, font_scale_);
    for (QAbstractAxis* axis : {x_axis_, y_axis_}) {
        axis->setLabelsFont(scaled_font(base, 0.95 * font_scale_));
        axis->setTitleFont(scaled_font(base, font_scale_));
    }
    placeLegend();
}

void QtChartsSurface::render(QPainter& painter, const QRectF& target) {
    // Lay the chart out at the target's size for the drawing, then give the view its own back.
    // The cached layer is drawn afresh so that an SVG gets lines, not a picture of them.
    const QSizeF shown = chart_->size();
    settled_->setCacheMode(QGraphicsItem::NoCache);
    legend_use_ = LegendUse::Picture;
    chart_->resize(target.size());
    placeLegend();  // its room, for the new layout
    chart_->layout()->activate();
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    chart_->scene()->render(&painter, target, QRectF(chart_->pos(), target.size()));
    painter.restore();
    legend_use_ = LegendUse::Widget;
    chart_->resize(shown);
    placeLegend();
    chart_->layout()->activate();
    settled_->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

std::unique_ptr<ChartSurface> make_chart_surface(QWidget* parent) {
    return std::make_unique<QtChartsSurface>(parent);
}

}  // namespace scalelab
