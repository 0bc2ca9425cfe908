#include "chart_legend.h"

#include <QApplication>
#include <QFontMetricsF>
#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <utility>

#include "scaled_font.h"

namespace scalelab {

namespace {

constexpr qreal shared_legend_edge = 6.0;  // kept free around the rows
// Names are elided so that this many entries fit a row, unless that would cut them below the
// shortest that tells one from another (LegendSizes::min_name).
constexpr qreal shared_legend_entries_a_row = 3.0;
constexpr qreal shared_legend_sample_width = 2.0;  // the runs' curves' width

}  // namespace

ChartLegend::ChartLegend(QWidget* parent) : QWidget(parent) {
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Fixed);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
    setFontScale(1.0);
}

void ChartLegend::setEntries(std::vector<Entry> entries) {
    if (entries == entries_)
        return;
    entries_ = std::move(entries);
    updateGeometry();
    update();
}

void ChartLegend::setFontScale(qreal scale) {
    // A new font lays the widget out again and repaints it (QWidget's FontChange).
    setFont(scaled_font(QApplication::font(), scale));
}

std::vector<QString> ChartLegend::shownNames() const {
    return layOut(width()).shown;
}

ChartLegend::Layout ChartLegend::layOut(qreal width) const {
    const QFontMetricsF text(font());
    const LegendSizes sizes = legend_sizes(text, shared_legend_edge);
    const qreal row_width = width - 2 * sizes.edge;
    const qreal spaces = 2 * sizes.gap * (shared_legend_entries_a_row - 1);
    const qreal name_width = std::max(
        sizes.min_name, (row_width - spaces) / shared_legend_entries_a_row - sizes.entryWidth(0));
    std::vector<qreal> names;
    std::vector<qreal> entry_widths;
    for (const Entry& entry : entries_) {
        names.push_back(text.horizontalAdvance(entry.name));
        entry_widths.push_back(sizes.entryWidth(std::min(names.back(), name_width)));
    }
    const std::vector<LegendRow> rows = flow_rows(entry_widths, row_width, 2 * sizes.gap);
    Layout layout;
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const QPointF at(sizes.edge + std::max<qreal>(0, (row_width - rows[r].width) / 2),
                         sizes.edge + qreal(r) * sizes.line);
        for (const LegendSlot& place : place_legend_row(rows[r], at, names, name_width, sizes)) {
            layout.shown.push_back(text.elidedText(entries_[layout.places.size()].name,
                                                   Qt::ElideMiddle, place.name_box.width()));
            layout.places.push_back(place);
        }
    }
    layout.height = rows.empty() ? 0 : qreal(rows.size()) * sizes.line + 2 * sizes.edge;
    return layout;
}

int ChartLegend::heightForWidth(int width) const {
    return int(std::ceil(layOut(width).height));
}

QSize ChartLegend::sizeHint() const {
    return {width(), heightForWidth(width())};
}

QSize ChartLegend::minimumSizeHint() const {
    return {0, heightForWidth(width())};
}

bool ChartLegend::event(QEvent* event) {
    if (event->type() != QEvent::ToolTip)
        return QWidget::event(event);
    const QPoint at = static_cast<QHelpEvent*>(event)->pos();
    const Layout layout = layOut(width());
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        if (layout.shown[i] != entries_[i].name && layout.places[i].name_box.contains(at)) {
            QToolTip::showText(static_cast<QHelpEvent*>(event)->globalPos(), entries_[i].name,
                               this);
            return true;
        }
    }
    QToolTip::hideText();
    event->ignore();
    return true;
}

void ChartLegend::paintEvent(QPaintEvent*) {
    const Layout layout = layOut(width());
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QColor text = palette().color(QPalette::WindowText);
    for (std::size_t i = 0; i < entries_.size(); ++i) {
        painter.setPen(QPen(entries_[i].colour, shared_legend_sample_width));
        painter.drawLine(layout.places[i].sample);
        painter.setPen(text);
        painter.drawText(layout.places[i].name_box, Qt::AlignLeft | Qt::AlignVCenter,
                         layout.shown[i]);
    }
}

}  // namespace scalelab
