#pragma once

#include <QLineF>
#include <QPointF>
#include <QRectF>
#include <QSizeF>

#include <cstddef>
#include <vector>

class QFontMetricsF;

namespace scalelab {

// Where a chart's legend goes and how much of its names it shows: plain geometry. An entry is a
// sample of the series' line, a gap, then its name; two entries of a row are two gaps apart.

// The sizes of a legend's parts (from its font) and what it keeps to.
struct LegendSizes {
    qreal line = 0;      // a row's height
    qreal sample = 0;    // the sample line's length
    qreal gap = 0;       // between a sample and its name; half the space between two entries
    qreal min_name = 0;  // the narrowest an elided name still says enough in
    qreal edge = 0;      // kept free at the chart's edges

    // An entry's width with a name `name` wide.
    qreal entryWidth(qreal name) const { return sample + gap + name; }
};

// The sizes of a legend written in `text`'s font, with `edge` kept free at the chart's edges.
LegendSizes legend_sizes(const QFontMetricsF& text, qreal edge);

// Entries [first, first + count) side by side, `width` wide with the spaces between them.
struct LegendRow {
    std::size_t first = 0;
    std::size_t count = 0;
    qreal width = 0;
};

// Entries of `widths`, in order, in rows no wider than `row_width`: an entry that would make its
// row wider starts the next (one wider than a row on its own has a row to itself); `spacing`
// between two entries of a row.
std::vector<LegendRow> flow_rows(const std::vector<qreal>& widths, qreal row_width, qreal spacing);

// Under the plot in rows, at the plot's right in a column, or nowhere.
enum class LegendPlace { Below, Beside, Nowhere };

struct LegendPlan {
    LegendPlace place = LegendPlace::Nowhere;
    qreal name_width = 0;         // names wider than this are elided to it
    std::vector<LegendRow> rows;  // below: its rows; beside: one entry a row
    QSizeF size;                  // the room it takes, gaps included
};

// A legend of names `name_widths` wide on a chart of `chart` size, taking at most a quarter of
// the chart: under the plot in rows at most a quarter of its height, with the names as little
// elided as that allows; else at its right in a column at most a quarter of its width and
// `column_height` tall; else nowhere. Names are never elided below sizes.min_name. Nowhere when
// there are no names.
LegendPlan plan_legend(const std::vector<qreal>& name_widths, QSizeF chart, qreal column_height,
                       const LegendSizes& sizes);

// The legend under the plot in as many rows as it takes up to `max_height`, names elided to
// sizes.min_name: where plan_legend() found no room, a chart with no other legend still lists
// as many of its names as it can.
LegendPlan plan_legend_rows(const std::vector<qreal>& name_widths, qreal chart_width,
                            qreal max_height, const LegendSizes& sizes);

// Where an entry's parts go.
struct LegendSlot {
    QLineF sample;
    QRectF name_box;
};

// The entries of `row` side by side, the row's top left at `at`: names `name_widths` wide (all
// the legend's, by entry), elided to `name_width`.
std::vector<LegendSlot> place_legend_row(const LegendRow& row, QPointF at,
                                         const std::vector<qreal>& name_widths, qreal name_width,
                                         const LegendSizes& sizes);

}  // namespace scalelab
