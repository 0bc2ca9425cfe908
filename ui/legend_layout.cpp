#include "legend_layout.h"

#include <QFontMetricsF>

#include <algorithm>
#include <cmath>

namespace scalelab {

namespace {

// A legend takes at most this share of its chart's height (under the plot) or width (beside it).
constexpr qreal legend_share = 0.25;
// A name elided to fit is still told from the others with about this many characters.
constexpr qreal legend_min_name_chars = 20.0;
// Widths worked out to fill a row exactly may sum to a hair more than it.
constexpr qreal row_rounding = 1e-6;

// The legend in rows `row_width` wide, names elided to `name_width`.
LegendPlan legend_in_rows(const std::vector<qreal>& name_widths, qreal row_width, qreal name_width,
                          const LegendSizes& sizes) {
    std::vector<qreal> entries;
    entries.reserve(name_widths.size());
    for (const qreal name : name_widths)
        entries.push_back(sizes.entryWidth(std::min(name, name_width)));
    LegendPlan plan{.place = LegendPlace::Below,
                    .name_width = name_width,
                    .rows = flow_rows(entries, row_width, 2 * sizes.gap),
                    .size = QSizeF()};
    qreal widest = 0;
    for (const LegendRow& row : plan.rows)
        widest = std::max(widest, row.width);
    plan.size = QSizeF(widest, qreal(plan.rows.size()) * sizes.line + sizes.gap);
    return plan;
}

}  // namespace

LegendSizes legend_sizes(const QFontMetricsF& text, qreal edge) {
    const qreal line = text.height();
    return {.line = line,
            .sample = 1.5 * line,
            .gap = 0.5 * line,
            .min_name = legend_min_name_chars * text.averageCharWidth(),
            .edge = edge};
}

std::vector<LegendRow> flow_rows(const std::vector<qreal>& widths, qreal row_width, qreal spacing) {
    std::vector<LegendRow> rows;
    for (std::size_t i = 0; i < widths.size(); ++i) {
        if (rows.empty() || rows.back().width + spacing + widths[i] > row_width + row_rounding) {
            rows.push_back({.first = i, .count = 1, .width = widths[i]});
        } else {
            ++rows.back().count;
            rows.back().width += spacing + widths[i];
        }
    }
    return rows;
}

LegendPlan plan_legend(const std::vector<qreal>& name_widths, QSizeF chart, qreal column_height,
                       const LegendSizes& sizes) {
    if (name_widths.empty())
        return {};
    const qreal longest = *std::max_element(name_widths.begin(), name_widths.end());
    const qreal narrowest = std::min(longest, sizes.min_name);
    // More entries to a row need names elided more: the first count whose rows fit elides least.
    const qreal row_width = chart.width() - 2 * sizes.edge;
    for (std::size_t per_row = 1; per_row <= name_widths.size(); ++per_row) {
        const qreal spaces = qreal(per_row - 1) * 2 * sizes.gap;
        const qreal name_width =
            std::min(longest, (row_width - spaces) / qreal(per_row) - sizes.entryWidth(0));
        if (name_width < narrowest)
            break;
        LegendPlan plan = legend_in_rows(name_widths, row_width, name_width, sizes);
        if (plan.size.height() <= chart.height() * legend_share)
            return plan;
    }
    const qreal name_width =
        std::min(longest, chart.width() * legend_share - 2 * sizes.gap - sizes.entryWidth(0));
    const qreal column = qreal(name_widths.size()) * sizes.line;
    if (name_width < narrowest || column > column_height)
        return {};
    LegendPlan plan{.place = LegendPlace::Beside,
                    .name_width = name_width,
                    .rows = {},
                    .size = QSizeF(2 * sizes.gap + sizes.entryWidth(name_width), column)};
    for (std::size_t i = 0; i < name_widths.size(); ++i)
        plan.rows.push_back({.first = i, .count = 1, .width = sizes.entryWidth(name_width)});
    return plan;
}

LegendPlan plan_legend_rows(const std::vector<qreal>& name_widths, qreal chart_width,
                            qreal max_height, const LegendSizes& sizes) {
    if (name_widths.empty())
        return {};
    const qreal longest = *std::max_element(name_widths.begin(), name_widths.end());
    LegendPlan plan = legend_in_rows(name_widths, chart_width - 2 * sizes.edge,
                                     std::min(longest, sizes.min_name), sizes);
    if (plan.size.height() > max_height) {
        const qreal fitting = std::floor((max_height - sizes.gap) / sizes.line);
        plan.rows.resize(std::size_t(std::max<qreal>(0, fitting)));
        plan.size.setHeight(qreal(plan.rows.size()) * sizes.line + sizes.gap);
    }
    if (plan.rows.empty())
        return {};
    return plan;
}

std::vector<LegendSlot> place_legend_row(const LegendRow& row, QPointF at,
                                         const std::vector<qreal>& name_widths, qreal name_width,
                                         const LegendSizes& sizes) {
    std::vector<LegendSlot> entry_slots;
    const qreal middle = at.y() + sizes.line / 2;
    for (std::size_t i = row.first; i < row.first + row.count; ++i) {
        const qreal name = std::min(name_widths[i], name_width);
        entry_slots.push_back(
            {.sample = QLineF(at.x(), middle, at.x() + sizes.sample, middle),
             .name_box = QRectF(at.x() + sizes.sample + sizes.gap, at.y(), name, sizes.line)});
        at.rx() += sizes.entryWidth(name) + 2 * sizes.gap;
    }
    return entry_slots;
}

}  // namespace scalelab
