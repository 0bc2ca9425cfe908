#pragma once

#include <QPointF>
#include <QRectF>
#include <QSizeF>

#include <vector>

namespace scalelab {

// Where the annotation labels of a chart go: plain geometry, in the plot's coordinates.

// A label to place: the dot it annotates and the size of its box with the whole text in it.
struct LabelRequest {
    QPointF dot;
    QSizeF size;
};

// How much of its text a placed label's box holds.
enum class LabelFit {
    Full,
    Elided,   // the box is narrower than asked for: the text is cut to it
    Dropped,  // no box: only the dot is drawn
};

struct PlacedLabel {
    QRectF box;  // empty when dropped
    LabelFit fit = LabelFit::Full;
    bool moved = false;  // not beside its dot: a leader line joins them
};

// The distances the layout keeps, in the plot's unit.
struct LabelSpacing {
    qreal dot_radius = 0;  // a dot's reach around its point: no box covers any dot
    qreal gap = 0;         // between a dot and a box beside it, and between two boxes
    qreal min_width = 0;   // the narrowest box an elided text still says something in
};

// One placement per request, in the requests' order, which is also their priority: boxes never
// overlap each other or any dot, and lie inside `plot`. Each box goes right of its dot, else
// left, above or below it (moved into the plot where it would leave it); where those are taken,
// it slides from them along the plot past the boxes in its way (stacking beside them), as close
// to its dot as it can; where no room is left at full width, it is narrowed (down to
// min_width); and where even that finds none, the label is dropped.
std::vector<PlacedLabel> lay_out_labels(const QRectF& plot, const std::vector<LabelRequest>& labels,
                                        const LabelSpacing& spacing);

// The point of `box` nearest to `point`: where a leader line from a dot meets its box.
QPointF nearest_point(const QRectF& box, QPointF point);

}  // namespace scalelab
