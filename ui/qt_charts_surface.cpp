#include "qt_charts_surface.h"

#include <QApplication>
#include <QChart>
#include <QChartView>
#include <QFontMetricsF>
#include <QGraphicsItem>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPaintEngine>
#include <QPainter>
#include <QPolygonF>
#include <QValueAxis>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace scalelab {

namespace {

constexpr int faint_alpha = 60;
constexpr qreal marker_size = 7.0;
constexpr qreal y_margin = 0.05;  // of the data's span, above and below
const QMarginsF edge_margin(marker_size / 2 + 1, marker_size / 2 + 1, marker_size / 2 + 1,
                            marker_size / 2 + 1);
// Above the chart's grid and axes (Qt Charts draws its own series at about 4), below the legend.
constexpr qreal curves_z = 5.0;
const QColor light_background = Qt::white;
const QColor dark_background(0x2b, 0x2d, 0x31);  // the dark theme's window colour

// Beyond this (a diverged loss can get close) the margins and nice numbers of a range overflow.
constexpr qreal largest_drawable = 1e300;

bool drawable(QPointF point, bool log_y) {
    return std::abs(point.x()) < largest_drawable && std::abs(point.y()) < largest_drawable &&
           (!log_y || point.y() > 0);
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
    axis->setMinorTickCount(8);  // 2, 3, ... 9 between the powers of ten
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

// Whole decades around a span of positive values for a log axis; [1, 10] when it is empty.
Span log_range(Span span) {
    if (span.empty())
        return {1.0, 10.0};
    const qreal low = std::pow(10.0, std::floor(std::log10(span.low)));
    qreal high = std::pow(10.0, std::ceil(std::log10(span.high)));
    if (high <= low)
        high = low * 10.0;
    return {low, high};
}

// Sets the axis to `range`, widened to nice numbers on a linear axis. The nice range is worked
// out on a scratch axis: every change of a shown axis' range lays its labels out again, and
// applyNiceNumbers() on the shown axis would change it twice per fit.
void set_axis_range(QAbstractAxis* axis, Span range) {
    auto* linear = qobject_cast<QValueAxis*>(axis);
    if (linear == nullptr) {
        axis->setRange(range.low, range.high);
        return;
    }
    QValueAxis nice;
    nice.setRange(range.low, range.high);
    nice.applyNiceNumbers();
    if (!(nice.min() < nice.max()))  // a span too narrow for the precision of its values
        nice.setRange(range.low, range.high);
    if (linear->tickCount() != nice.tickCount())
        linear->setTickCount(nice.tickCount());
    linear->setRange(nice.min(), nice.max());
}

Span axis_range(const QAbstractAxis* axis) {
    if (const auto* linear = qobject_cast<const QValueAxis*>(axis))
        return {linear->min(), linear->max()};
    const auto* log = qobject_cast<const QLogValueAxis*>(axis);
    return {log->min(), log->max()};
}

QFont scaled(QFont font, qreal scale, bool bold = false) {
    font.setPointSizeF(font.pointSizeF() * scale);
    font.setBold(bold);
    return font;
}

// `colour` at `alpha` over `background`, as an opaque colour: the faint look without the cost of
// alpha blending every pixel of every segment.
QColor blend(const QColor& colour, const QColor& background, int alpha) {
    const qreal a = alpha / 255.0;
    return QColor::fromRgbF(float(colour.redF() * a + background.redF() * (1 - a)),
                            float(colour.greenF() * a + background.greenF() * (1 - a)),
                            float(colour.blueF() * a + background.blueF() * (1 - a)));
}

// Data to plot-area coordinates.
class PlotMapping {
  public:
    PlotMapping(const QRectF& area, qreal min_x, qreal max_x, qreal min_y, qreal max_y, bool log_y)
        : area_(area), log_y_(log_y), min_x_(min_x), min_y_(log_y ? std::log10(min_y) : min_y) {
        const qreal top = log_y ? std::log10(max_y) : max_y;
        x_scale_ = max_x > min_x ? area.width() / (max_x - min_x) : 0.0;
        y_scale_ = top > min_y_ ? area.height() / (top - min_y_) : 0.0;
    }

    QPointF map(QPointF value) const {
        const qreal y = log_y_ ? std::log10(value.y()) : value.y();
        return {area_.left() + (value.x() - min_x_) * x_scale_,
                area_.bottom() - (y - min_y_) * y_scale_};
    }

  private:
    QRectF area_;
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

// Draws the curves of the entries whose `fresh` flag matches its own into the plot area, faint
// ones first.
class QtChartsSurface::CurveLayer : public QGraphicsItem {
  public:
    CurveLayer(const QtChartsSurface& surface, bool fresh, QGraphicsItem* parent)
        : QGraphicsItem(parent), surface_(surface), fresh_(fresh) {
        setZValue(curves_z);
        setAcceptedMouseButtons(Qt::NoButton);
    }

    void setArea(const QRectF& area) {
        if (area == area_)
            return;
        prepareGeometryChange();
        area_ = area;
    }

    // The plot area and a margin for the markers of points on its edges.
    QRectF boundingRect() const override { return area_.marginsAdded(edge_margin); }

    void paint(QPainter* painter, const QStyleOptionGraphicsItem*, QWidget*) override {
        if (area_.isEmpty())
            return;
        const Ranges& ranges = surface_.ranges_;
        const PlotMapping mapping(area_, ranges.min_x, ranges.max_x, ranges.min_y, ranges.max_y,
                                  surface_.log_y_);
        // Thinning works in device pixels (a 2x export keeps twice the detail); pixel painting
        // draws wide lines segment by segment, vector output (SVG) as one polyline.
        const qreal device_scale = std::max<qreal>(std::abs(painter->deviceTransform().m11()), 1);
        const bool raster = painter->paintEngine() != nullptr &&
                            painter->paintEngine()->type() == QPaintEngine::Raster;
        painter->save();
        painter->setClipRect(boundingRect(), Qt::IntersectClip);
        painter->setRenderHint(QPainter::Antialiasing);
        for (const bool faint : {true, false})
            for (const Entry* entry : surface_.order_)
                if (entry->fresh == fresh_ && entry->style.faint == faint)
                    draw(*painter, *entry, mapping, device_scale, raster);
        painter->restore();
    }

  private:
    void draw(QPainter& painter, const Entry& entry, const PlotMapping& mapping, qreal device_scale,
              bool raster) {
        if (entry.shown.isEmpty())
            return;
        const SeriesStyle& style = entry.style;
        const QColor colour =
            style.faint ? blend(style.colour, surface_.background(), faint_alpha) : style.colour;
        const qreal width = style.faint ? 1.0 : style.width;
        const bool wide = width > 1.0;
        // A wide line covers two pixel columns: thinning to two points per two columns hides
        // nothing it would show.
        thin_to_columns(entry.shown, mapping, (wide ? 2.0 : 1.0) / device_scale, polygon_);
        drop_straight_points(polygon_, 0.25 / device_scale, 8.0 / device_scale);

        // Faint raw lines are one pixel wide and pre-blended: aliased they look the same and
        // cost a fraction of the antialiased stroke.
        painter.setRenderHint(QPainter::Antialiasing, !style.faint);
        QPen pen(colour, width);
        pen.setStyle(style.dashed ? Qt::DashLine : Qt::SolidLine);
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

        if (style.markers) {
            painter.setPen(QPen(surface_.background(), 1.0));
            painter.setBrush(style.colour);
            const qreal radius = marker_size / 2;
            for (const QPointF& value : entry.shown)  // every one, thinned or not
                painter.drawEllipse(mapping.map(value), radius, radius);
        }
    }

    const QtChartsSurface& surface_;
    const bool fresh_;
    QRectF area_;
    QPolygonF polygon_;       // reused from paint to paint
    QList<QLineF> segments_;  // reused from paint to paint
};

QtChartsSurface::QtChartsSurface(QWidget* parent) {
    chart_ = new QChart;
    // Animations would replay on every live redraw and keep the event loop busy.
    chart_->setAnimationOptions(QChart::NoAnimation);
    chart_->setMargins(QMargins(6, 6, 6, 6));
    chart_->layout()->setContentsMargins(0, 0, 0, 0);
    chart_->legend()->setAlignment(Qt::AlignBottom);
    chart_->legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
    applyBackground();

    x_axis_ = make_value_axis();
    chart_->addAxis(x_axis_, Qt::AlignBottom);
    useYAxis(make_value_axis());

    settled_ = new CurveLayer(*this, false, chart_);
    // Repainted only when a curve settles in it or the axes move.
    settled_->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
    fresh_ = new CurveLayer(*this, true, chart_);
    QObject::connect(chart_, &QChart::plotAreaChanged, chart_, [this](const QRectF& area) {
        settled_->setArea(area);
        fresh_->setArea(area);
    });
    QObject::connect(chart_, &QGraphicsWidget::geometryChanged, chart_, [this] { placeLegend(); });

    view_ = new QChartView(chart_, parent);
    view_->setRenderHint(QPainter::Antialiasing);
    view_->setMinimumSize(320, 220);
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

void QtChartsSurface::setLogY(bool log) {
    if (log == log_y_)
        return;
    log_y_ = log;
    useYAxis(log ? static_cast<QAbstractAxis*>(make_log_axis()) : make_value_axis());
    for (Entry* item : order_)
        if (!item->vertical_x)
            updateShown(*item);
    fitAxes();
}

// Attaches every series to `axis` in place of the y axis in use (deleted), keeping its title.
void QtChartsSurface::useYAxis(QAbstractAxis* axis) {
    if (y_axis_ != nullptr) {
        axis->setTitleText(y_axis_->titleText());
        chart_->removeAxis(y_axis_);
        delete y_axis_;
    }
    y_axis_ = axis;
    chart_->addAxis(y_axis_, Qt::AlignLeft);
    for (Entry* item : order_)
        item->legend_series->attachAxis(y_axis_);
    applyFonts();
}

QtChartsSurface::Entry& QtChartsSurface::entry(const QString& key, const SeriesStyle& style) {
    const auto found = entries_.find(key);
    if (found != entries_.end()) {
        if (!(found->second.style == style)) {
            found->second.style = style;
            applyStyle(found->second);
        }
        return found->second;
    }
    Entry& item = entries_[key];
    item.legend_series = new QLineSeries;
    item.legend_series->setObjectName(key);
    item.style = style;
    chart_->addSeries(item.legend_series);
    item.legend_series->attachAxis(x_axis_);
    item.legend_series->attachAxis(y_axis_);
    applyStyle(item);
    order_.push_back(&item);
    return item;
}

void QtChartsSurface::applyStyle(Entry& item) {
    const SeriesStyle& style = item.style;
    QColor colour = style.colour;
    qreal width = style.width;
    if (style.faint) {
        colour.setAlpha(faint_alpha);
        width = 1.0;
    }
    QPen pen(colour, width);
    pen.setStyle(style.dashed ? Qt::DashLine : Qt::SolidLine);
    QLineSeries* series = item.legend_series;
    series->setPen(pen);
    series->setPointsVisible(style.markers);
    if (style.markers) {
        series->setMarkerSize(marker_size);
        series->setBrush(style.colour);
    }
    series->setName(item.legend);
    for (QLegendMarker* marker : chart_->legend()->markers(series))
        marker->setVisible(!item.legend.isEmpty());
    touch(item);
}

void QtChartsSurface::setSeries(const QString& key, const QString& legend,
                                const QList<QPointF>& points, const SeriesStyle& style) {
    Entry& item = entry(key, style);
    if (item.legend != legend) {
        item.legend = legend;
        applyStyle(item);
    }
    item.points = points;
    updateShown(item);
}

void QtChartsSurface::updateShown(Entry& item) {
    const auto keep = [this](QPointF point) { return drawable(point, log_y_); };
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
    (item.fresh ? fresh_ : settled_)->update();
    chart_->removeSeries(item.legend_series);
    delete item.legend_series;
    std::erase(order_, &item);
    entries_.erase(found);
}

void QtChartsSurface::clearSeries() {
    chart_->removeAllSeries();
    order_.clear();
    entries_.clear();
    settled_->update();
    fresh_->update();
}

bool QtChartsSurface::hasSeries(const QString& key) const {
    return entries_.contains(key);
}

QList<QPointF> QtChartsSurface::seriesPoints(const QString& key) const {
    const auto found = entries_.find(key);
    return found == entries_.end() ? QList<QPointF>() : found->second.shown;
}

void QtChartsSurface::setVerticalLine(const QString& key, qreal x, const SeriesStyle& style) {
    Entry& item = entry(key, style);
    const QList<QPointF> ends = {QPointF(x, ranges_.min_y), QPointF(x, ranges_.max_y)};
    if (item.vertical_x == x && item.points == ends)
        return;
    item.vertical_x = x;
    item.points = ends;
    updateShown(item);
}

void QtChartsSurface::fitAxes() {
    Span x;
    Span y;
    for (const Entry* item : order_) {
        if (item->vertical_x) {
            if (std::isfinite(*item->vertical_x))
                x.include(*item->vertical_x, *item->vertical_x);
        } else if (!item->extent.empty()) {
            x.include(item->extent.min_x, item->extent.max_x);
            y.include(item->extent.min_y, item->extent.max_y);
        }
    }
    // Progress (steps, epochs, samples, seconds, devices) reads best from zero: the x axis starts
    // there when that at most doubles its range.
    if (!x.empty() && x.low > 0 && x.low <= x.high - x.low)
        x.low = 0;
    set_axis_range(x_axis_, linear_range(x, 0.0));
    set_axis_range(y_axis_, log_y_ ? log_range(y) : linear_range(y, y_margin));

    const Span shown_x = axis_range(x_axis_);
    const Span shown_y = axis_range(y_axis_);
    const Ranges ranges{
        .min_x = shown_x.low, .max_x = shown_x.high, .min_y = shown_y.low, .max_y = shown_y.high};
    if (ranges.min_x != ranges_.min_x || ranges.max_x != ranges_.max_x ||
        ranges.min_y != ranges_.min_y || ranges.max_y != ranges_.max_y) {
        ranges_ = ranges;
        settled_->update();
        fresh_->update();
    }
    // Vertical lines span the y range just chosen.
    for (auto& [key, item] : entries_)
        if (item.vertical_x)
            setVerticalLine(key, *item.vertical_x, item.style);

    // The batch ends: what did not change in it moves to the cached layer.
    bool settled_more = false;
    for (Entry* item : order_) {
        if (item->fresh && item->batch != batch_) {
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

// Under the plot while the names fit on one line there, else to its right, one name a line:
// Qt Charts' legend never wraps, it elides the names until nothing of them is left.
void QtChartsSurface::placeLegend() {
    const QFontMetricsF metrics(chart_->legend()->font());
    qreal needed = 0;
    for (const Entry* item : order_)
        if (!item->legend.isEmpty())
            needed += metrics.horizontalAdvance(item->legend) + 3 * metrics.height();
    const Qt::Alignment wanted =
        needed <= chart_->size().width() ? Qt::AlignBottom : Qt::AlignRight;
    if (chart_->legend()->alignment() != wanted)
        chart_->legend()->setAlignment(wanted);
}

void QtChartsSurface::setDarkTheme(bool dark) {
    dark_ = dark;
    // A theme resets the fonts, the background and every series' pen: apply ours again.
    chart_->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
    applyBackground();
    applyFonts();
    for (Entry* item : order_)
        applyStyle(*item);
    settled_->update();
}

QColor QtChartsSurface::background() const {
    return dark_ ? dark_background : light_background;
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
}

void QtChartsSurface::applyFonts() {
    const QFont base = QApplication::font();
    chart_->setTitleFont(scaled(base, 1.25 * font_scale_, true));
    chart_->legend()->setFont(scaled(base, font_scale_));
    for (QAbstractAxis* axis : {static_cast<QAbstractAxis*>(x_axis_), y_axis_}) {
        axis->setLabelsFont(scaled(base, 0.95 * font_scale_));
        axis->setTitleFont(scaled(base, font_scale_));
    }
    placeLegend();
}

void QtChartsSurface::render(QPainter& painter, const QRectF& target) {
    // Lay the chart out at the target's size for the drawing, then give the view its own back.
    // The cached layer is drawn afresh so that an SVG gets lines, not a picture of them.
    const QSizeF shown = chart_->size();
    settled_->setCacheMode(QGraphicsItem::NoCache);
    chart_->resize(target.size());
    chart_->layout()->activate();
    painter.save();
    painter.setRenderHint(QPainter::Antialiasing);
    chart_->scene()->render(&painter, target, QRectF(chart_->pos(), target.size()));
    painter.restore();
    chart_->resize(shown);
    chart_->layout()->activate();
    settled_->setCacheMode(QGraphicsItem::DeviceCoordinateCache);
}

std::unique_ptr<ChartSurface> make_chart_surface(QWidget* parent) {
    return std::make_unique<QtChartsSurface>(parent);
}

}  // namespace scalelab
