#include "stacked_bars_widget.h"

#include <QEvent>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QToolTip>

#include <algorithm>
#include <cmath>

#include "chart_style.h"
#include "scaled_font.h"

namespace scalelab {

namespace {

// In pixels at a font scale of 1.
constexpr double margin = 12;
constexpr double max_slot = 54;     // bars stay bars, not blocks, when there are few
constexpr double bar_share = 0.62;  // of a slot; the rest is the gap between bars
constexpr double min_tick_spacing = 80;

// Dark text on light segments, white text on dark ones.
QColor text_on(const QColor& fill) {
    const double luminance = 0.299 * fill.red() + 0.587 * fill.green() + 0.114 * fill.blue();
    return luminance > 150 ? QColor(0x20, 0x21, 0x24) : QColor(Qt::white);
}

}  // namespace

StackedBarsWidget::StackedBarsWidget(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void StackedBarsWidget::setParts(const QList<Part>& parts) {
    parts_ = parts;
    hovered_ = {};
    updateGeometry();
    update();
}

void StackedBarsWidget::setBars(const QStringList& labels,
                                const std::vector<std::vector<double>>& values) {
    labels_ = labels;
    values_ = values;
    values_.resize(std::size_t(labels.size()));
    hovered_ = {};
    updateGeometry();
    update();
}

void StackedBarsWidget::setReference(double value, const QString& name) {
    reference_ = value;
    reference_name_ = name;
    update();
}

void StackedBarsWidget::setValueUnit(const QString& unit) {
    unit_ = unit;
    update();
}

void StackedBarsWidget::setValueAxisTitle(const QString& title) {
    axis_title_ = title;
    update();
}

void StackedBarsWidget::setDarkTheme(bool dark) {
    dark_ = dark;
    update();
}

void StackedBarsWidget::setFontScale(qreal scale) {
    font_scale_ = scale;
    updateGeometry();
    update();
}

QFont StackedBarsWidget::scaledFont(qreal factor, bool bold) const {
    return scaled_font(font(), factor * font_scale_, bold);
}

QColor StackedBarsWidget::background() const {
    return chart_background(dark_);
}

QColor StackedBarsWidget::textColour() const {
    return dark_ ? QColor(0xe6, 0xe6, 0xe6) : QColor(0x20, 0x21, 0x24);
}

QColor StackedBarsWidget::gridColour() const {
    return dark_ ? QColor(0x45, 0x48, 0x4e) : QColor(0xe4, 0xe6, 0xea);
}

double StackedBarsWidget::value(int bar, int part) const {
    const std::vector<double>& row = values_[std::size_t(bar)];
    return std::size_t(part) < row.size() ? row[std::size_t(part)] : 0.0;
}

double StackedBarsWidget::barTotal(int bar) const {
    double total = 0;
    for (int part = 0; part < int(parts_.size()); ++part)
        total += value(bar, part);
    return total;
}

double StackedBarsWidget::tickStep(double maximum, int ticks) {
    const double raw = maximum / std::max(ticks, 1);
    const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
    const double normalised = raw / magnitude;
    const double nice = normalised <= 1 ? 1 : normalised <= 2 ? 2 : normalised <= 5 ? 5 : 10;
    return nice * magnitude;
}

QString StackedBarsWidget::formatValue(double number) const {
    const int decimals = number >= 100 ? 0 : number >= 10 ? 1 : 2;
    const QString figure = QString::number(number, 'f', decimals);
    return unit_.isEmpty() ? figure : figure + QLatin1Char(' ') + unit_;
}

StackedBarsWidget::Geometry StackedBarsWidget::geometry() const {
    const double scale = font_scale_;
    const QFontMetricsF legend_metrics(scaledFont(1.0));
    const QFontMetricsF label_metrics(scaledFont(1.0, true));
    const QFontMetricsF small_metrics(scaledFont(0.9));
    const double pad = margin * scale;

    Geometry geometry;
    // The legend flows in rows over the whole width.
    const double swatch = std::round(legend_metrics.height() * 0.75);
    const double row_height = legend_metrics.height() + 4;
    double x = pad;
    double y = pad;
    for (const Part& part : parts_) {
        const double item = swatch + 6 + legend_metrics.horizontalAdvance(part.name);
        if (x > pad && x + item > width() - pad) {
            x = pad;
            y += row_height;
        }
        geometry.swatches.append(QRectF(x, y + (row_height - swatch) / 2, swatch, swatch));
        x += item + 18 * scale;
    }
    geometry.legend =
        QRectF(pad, pad, width() - 2 * pad, parts_.isEmpty() ? 0 : y + row_height - pad);

    double label_width = 0;
    for (const QString& label : labels_)
        label_width = std::max(label_width, label_metrics.horizontalAdvance(label));
    double largest = reference_;
    for (int bar = 0; bar < int(labels_.size()); ++bar)
        largest = std::max(largest, barTotal(bar));
    const double total_width = small_metrics.horizontalAdvance(formatValue(largest)) + 8;

    // Room above the bars for the reference line's label, below them for the axis.
    const double top = geometry.legend.bottom() + 10 * scale + small_metrics.height() + 4;
    const double axis_height =
        6 + small_metrics.height() + (axis_title_.isEmpty() ? 0 : 4 + legend_metrics.height());
    const double left = pad + label_width + 10 * scale;
    const double right = width() - pad - total_width;
    const double available = std::max(0.0, height() - pad - axis_height - top);
    const int bars = std::max(1, int(labels_.size()));
    geometry.slot = std::min(available / bars, max_slot * scale);
    geometry.bar = std::round(geometry.slot * bar_share);
    geometry.plot = QRectF(left, top, std::max(0.0, right - left), geometry.slot * bars);
    geometry.below = axis_height + pad;

    const int ticks = std::clamp(int(geometry.plot.width() / (min_tick_spacing * scale)), 2, 10);
    const double step = tickStep(largest > 0 ? largest : 1.0, ticks);
    geometry.tick_step = step;
    geometry.axis_maximum = std::ceil((largest > 0 ? largest : 1.0) / step) * step;
    return geometry;
}

QRectF StackedBarsWidget::segmentRect(const Geometry& geometry, int bar, int part) const {
    if (bar < 0 || bar >= int(labels_.size()) || part < 0 || part >= int(parts_.size()))
        return {};
    const double per_value = geometry.plot.width() / geometry.axis_maximum;
    double start = 0;
    for (int before = 0; before < part; ++before)
        start += value(bar, before);
    const double length = value(bar, part);
    if (length <= 0)
        return {};
    const double centre = geometry.plot.top() + (bar + 0.5) * geometry.slot;
    return QRectF(geometry.plot.left() + start * per_value, centre - geometry.bar / 2,
                  length * per_value, geometry.bar);
}

QRectF StackedBarsWidget::segmentRect(int bar, int part) const {
    return segmentRect(geometry(), bar, part);
}

StackedBarsWidget::Hit StackedBarsWidget::hitAt(const QPointF& position) const {
    const Geometry shape = geometry();
    for (int bar = 0; bar < int(labels_.size()); ++bar)
        for (int part = 0; part < int(parts_.size()); ++part)
            if (segmentRect(shape, bar, part).contains(position))
                return {bar, part};
    return {};
}

QString StackedBarsWidget::toolTipAt(const QPoint& position) const {
    const Hit hit = hitAt(position);
    if (hit.bar < 0)
        return {};
    const double share =
        value(hit.bar, hit.part) / (reference_ > 0 ? reference_ : barTotal(hit.bar));
    const QString whole = reference_ > 0 ? reference_name_ : tr("bar");
    return tr("%1 on %2\n%3, %4% of the %5")
        .arg(parts_[hit.part].name, labels_[hit.bar], formatValue(value(hit.bar, hit.part)))
        .arg(share * 100.0, 0, 'f', 0)
        .arg(whole);
}

bool StackedBarsWidget::event(QEvent* event) {
    if (event->type() == QEvent::ToolTip) {
        auto* help = static_cast<QHelpEvent*>(event);
        const QString text = toolTipAt(help->pos());
        if (text.isEmpty()) {
            QToolTip::hideText();
            event->ignore();
        } else {
            const Hit hit = hitAt(help->pos());
            QToolTip::showText(help->globalPos(), text, this,
                               segmentRect(hit.bar, hit.part).toAlignedRect());
        }
        return true;
    }
    return QWidget::event(event);
}

void StackedBarsWidget::mouseMoveEvent(QMouseEvent* event) {
    const Hit hit = hitAt(event->position());
    if (hit.bar != hovered_.bar || hit.part != hovered_.part) {
        hovered_ = hit;
        update();
    }
    QWidget::mouseMoveEvent(event);
}

void StackedBarsWidget::leaveEvent(QEvent* event) {
    if (hovered_.bar >= 0) {
        hovered_ = {};
        update();
    }
    QWidget::leaveEvent(event);
}

// Tall enough for every bar at its full thickness.
QSize StackedBarsWidget::sizeHint() const {
    const Geometry shape = geometry();
    const int bars = std::max(1, int(labels_.size()));
    return QSize(640,
                 int(std::ceil(shape.plot.top() + bars * max_slot * font_scale_ + shape.below)));
}

QSize StackedBarsWidget::minimumSizeHint() const {
    return QSize(320, 160);
}

void StackedBarsWidget::paintEvent(QPaintEvent*) {
    QPainter painter(this);
    painter.fillRect(rect(), background());
    painter.setRenderHint(QPainter::Antialiasing);
    const Geometry shape = geometry();
    paintLegend(painter, shape);
    paintAxis(painter, shape);
    paintBars(painter, shape);
    paintReference(painter, shape);
}

void StackedBarsWidget::paintLegend(QPainter& painter, const Geometry& shape) const {
    painter.setFont(scaledFont(1.0));
    const QFontMetricsF metrics(painter.font());
    for (int part = 0; part < int(parts_.size()); ++part) {
        const QRectF swatch = shape.swatches[part];
        QPainterPath path;
        path.addRoundedRect(swatch, 2, 2);
        painter.fillPath(path, parts_[part].colour);
        painter.setPen(textColour());
        const QRectF text(swatch.right() + 6, swatch.center().y() - metrics.height() / 2,
                          metrics.horizontalAdvance(parts_[part].name) + 1, metrics.height());
        painter.drawText(text, Qt::AlignLeft | Qt::AlignVCenter, parts_[part].name);
    }
}

void StackedBarsWidget::paintAxis(QPainter& painter, const Geometry& shape) const {
    const QRectF plot = shape.plot;
    painter.setFont(scaledFont(0.9));
    const QFontMetricsF metrics(painter.font());
    const int decimals = shape.tick_step >= 1 ? 0 : int(std::ceil(-std::log10(shape.tick_step)));
    const int ticks = int(std::lround(shape.axis_maximum / shape.tick_step));
    const QColor secondary = dark_ ? QColor(0xa8, 0xab, 0xb0) : QColor(0x5f, 0x63, 0x68);
    for (int tick = 0; tick <= ticks; ++tick) {
        const double x = plot.left() + plot.width() * tick / ticks;
        painter.setPen(QPen(gridColour(), 1));
        painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()));
        const QString label = QString::number(tick * shape.tick_step, 'f', decimals);
        const double label_width = metrics.horizontalAdvance(label);
        painter.setPen(secondary);
        painter.drawText(
            QRectF(x - label_width / 2 - 1, plot.bottom() + 6, label_width + 2, metrics.height()),
            Qt::AlignCenter, label);
    }
    painter.setPen(QPen(secondary, 1));
    painter.drawLine(plot.bottomLeft(), plot.bottomRight());
    if (!axis_title_.isEmpty()) {
        painter.setFont(scaledFont(1.0));
        painter.setPen(textColour());
        const QFontMetricsF title_metrics(painter.font());
        painter.drawText(QRectF(plot.left(), plot.bottom() + 6 + metrics.height() + 4, plot.width(),
                                title_metrics.height()),
                         Qt::AlignCenter, axis_title_);
    }
}

void StackedBarsWidget::paintBars(QPainter& painter, const Geometry& shape) const {
    const QFont label_font = scaledFont(1.0, true);
    const QFont small_font = scaledFont(0.9);
    const QFontMetricsF small_metrics(small_font);
    for (int bar = 0; bar < int(labels_.size()); ++bar) {
        const double centre = shape.plot.top() + (bar + 0.5) * shape.slot;
        painter.setFont(label_font);
        painter.setPen(textColour());
        painter.drawText(
            QRectF(0, centre - shape.slot / 2, shape.plot.left() - 10 * font_scale_, shape.slot),
            Qt::AlignRight | Qt::AlignVCenter, labels_[bar]);

        // Segments are clipped to the whole bar's rounded outline; a thin background-coloured line
        // between them keeps neighbours of similar lightness apart.
        const double total = barTotal(bar);
        const QRectF whole(shape.plot.left(), centre - shape.bar / 2,
                           total * shape.plot.width() / shape.axis_maximum, shape.bar);
        QPainterPath outline;
        outline.addRoundedRect(whole, 3, 3);
        painter.save();
        painter.setClipPath(outline);
        painter.setFont(small_font);
        for (int part = 0; part < int(parts_.size()); ++part) {
            const QRectF segment = segmentRect(shape, bar, part);
            if (segment.isEmpty())
                continue;
            const QColor fill = parts_[part].colour;
            painter.fillRect(segment, fill);
            painter.setPen(QPen(background(), 1.5));
            painter.drawLine(segment.topRight(), segment.bottomRight());
            const double share = value(bar, part) / (reference_ > 0 ? reference_ : total);
            const QString percent = QStringLiteral("%1%").arg(share * 100.0, 0, 'f', 0);
            if (small_metrics.horizontalAdvance(percent) + 8 <= segment.width()) {
                painter.setPen(text_on(fill));
                painter.drawText(segment, Qt::AlignCenter, percent);
            }
        }
        painter.restore();
        if (hovered_.bar == bar) {
            painter.setPen(QPen(textColour(), 2));
            painter.setBrush(Qt::NoBrush);
            painter.drawRect(segmentRect(shape, bar, hovered_.part).adjusted(1, 1, -1, -1));
        }
        // The total goes after the bar, or after the reference line when that is further.
        const double after = std::max(whole.right(), referenceX(shape)) + 6;
        painter.setFont(small_font);
        painter.setPen(textColour());
        painter.drawText(QRectF(after, centre - shape.slot / 2, width() - after, shape.slot),
                         Qt::AlignLeft | Qt::AlignVCenter, formatValue(total));
    }
}

double StackedBarsWidget::referenceX(const Geometry& shape) const {
    return shape.plot.left() + std::max(0.0, reference_) * shape.plot.width() / shape.axis_maximum;
}

void StackedBarsWidget::paintReference(QPainter& painter, const Geometry& shape) const {
    if (reference_ <= 0 || labels_.isEmpty())
        return;
    const double x = referenceX(shape);
    painter.setPen(QPen(textColour(), 1.25, Qt::DashLine));
    painter.drawLine(QPointF(x, shape.plot.top() - 2), QPointF(x, shape.plot.bottom()));
    painter.setFont(scaledFont(0.9));
    const QFontMetricsF metrics(painter.font());
    const QString label = reference_name_ + QLatin1Char(' ') + formatValue(reference_);
    const double label_width = metrics.horizontalAdvance(label) + 2;
    const double left = std::clamp(x - label_width / 2, 0.0, width() - label_width);
    painter.drawText(
        QRectF(left, shape.plot.top() - 4 - metrics.height(), label_width, metrics.height()),
        Qt::AlignCenter, label);
}

}  // namespace scalelab
