#include "label_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

namespace scalelab {

namespace {

// Each try at a narrower box keeps this share of the last one's width.
constexpr qreal narrowing = 0.75;
constexpr std::size_t max_widths_tried = 10;  // the last a tenth of the first at most
// Further from its dot than beside it by more than this, a box counts as moved.
constexpr qreal moved_tolerance = 0.5;

// Where a box goes first, in the order tried.
enum class Side { Right, Left, Above, Below };
constexpr std::array<Side, 4> label_sides = {Side::Right, Side::Left, Side::Above, Side::Below};

qreal distance(const QRectF& box, QPointF point) {
    const QPointF offset = nearest_point(box, point) - point;
    return std::hypot(offset.x(), offset.y());
}

// `box` moved the least that puts it inside `plot` (which it is no larger than).
QRectF clamped(QRectF box, const QRectF& plot) {
    box.moveLeft(std::clamp(box.left(), plot.left(), plot.right() - box.width()));
    box.moveTop(std::clamp(box.top(), plot.top(), plot.bottom() - box.height()));
    return box;
}

// What a new box must not overlap: every dot and the boxes placed so far, each grown by the
// distance a box keeps from it.
class LabelObstacles {
  public:
    LabelObstacles(const std::vector<LabelRequest>& labels, const LabelSpacing& spacing)
        : spacing_(spacing) {
        const qreal reach = spacing.dot_radius + spacing.gap / 2;
        for (const LabelRequest& label : labels)
            rects_.push_back(
                QRectF(label.dot - QPointF(reach, reach), QSizeF(2 * reach, 2 * reach)));
    }

    void add(const QRectF& box) {
        const qreal gap = spacing_.gap;
        rects_.push_back(box.adjusted(-gap, -gap, gap, gap));
    }

    // The box of `size` on `side` of `dot`, moved into `plot`; nothing where that is taken.
    std::optional<QRectF> beside(QPointF dot, QSizeF size, Side side, const QRectF& plot) const {
        const QRectF box = clamped(besideDot(dot, size, side), plot);
        if (std::any_of(rects_.begin(), rects_.end(),
                        [&box](const QRectF& taken) { return taken.intersects(box); }))
            return std::nullopt;
        return box;
    }

    // The free box nearest `dot` that is found sliding the box on `side` of it across the plot,
    // up and down beside the dot or left and right above and below it: at its first place, or
    // just past one of the rectangles in its way.
    std::optional<QRectF> slid(QPointF dot, QSizeF size, Side side, const QRectF& plot) const {
        const QRectF start = clamped(besideDot(dot, size, side), plot);
        const bool vertical = side == Side::Right || side == Side::Left;
        const QRectF band = vertical
                                ? QRectF(start.left(), plot.top(), size.width(), plot.height())
                                : QRectF(plot.left(), start.top(), plot.width(), size.height());
        std::vector<QRectF> in_band;
        for (const QRectF& taken : rects_)
            if (taken.intersects(band))
                in_band.push_back(taken);
        std::vector<QRectF> tries = {start};
        for (const QRectF& taken : in_band) {
            if (vertical) {
                tries.push_back(start.translated(0, taken.top() - start.bottom()));
                tries.push_back(start.translated(0, taken.bottom() - start.top()));
            } else {
                tries.push_back(start.translated(taken.left() - start.right(), 0));
                tries.push_back(start.translated(taken.right() - start.left(), 0));
            }
        }
        std::optional<QRectF> best;
        for (const QRectF& candidate : tries) {
            const QRectF box = clamped(candidate, plot);
            const bool free =
                std::none_of(in_band.begin(), in_band.end(),
                             [&box](const QRectF& taken) { return taken.intersects(box); });
            if (free && (!best || distance(box, dot) < distance(*best, dot)))
                best = box;
        }
        return best;
    }

  private:
    QRectF besideDot(QPointF dot, QSizeF size, Side side) const {
        const qreal away = spacing_.dot_radius + spacing_.gap;
        switch (side) {
            case Side::Right:
                return {QPointF(dot.x() + away, dot.y() - size.height() / 2), size};
            case Side::Left:
                return {QPointF(dot.x() - away - size.width(), dot.y() - size.height() / 2), size};
            case Side::Above:
                return {QPointF(dot.x() - size.width() / 2, dot.y() - away - size.height()), size};
            case Side::Below:
                return {QPointF(dot.x() - size.width() / 2, dot.y() + away), size};
        }
        return {};
    }

    LabelSpacing spacing_;
    std::vector<QRectF> rects_;
};

// The widths a label's box is tried at: whole (as far as the plot's `room` allows), then narrower
// down to `narrowest`; none where the room is narrower than both.
std::vector<qreal> label_widths(qreal whole, qreal room, qreal narrowest) {
    const qreal first = std::min(whole, room);
    if (first <= 0 || first < std::min(whole, narrowest))
        return {};
    std::vector<qreal> widths = {first};
    while (widths.back() > narrowest && widths.size() < max_widths_tried)
        widths.push_back(std::max(narrowest, widths.back() * narrowing));
    return widths;
}

// A box of `size` by `dot`: beside it if there is room there, else the nearest found sliding.
std::optional<QRectF> place_label(const LabelObstacles& taken, QPointF dot, QSizeF size,
                                  const QRectF& plot) {
    for (const Side side : label_sides)
        if (const std::optional<QRectF> box = taken.beside(dot, size, side, plot))
            return box;
    std::optional<QRectF> best;
    for (const Side side : label_sides) {
        const std::optional<QRectF> box = taken.slid(dot, size, side, plot);
        if (box && (!best || distance(*box, dot) < distance(*best, dot)))
            best = box;
    }
    return best;
}

}  // namespace

QPointF nearest_point(const QRectF& box, QPointF point) {
    return {std::clamp(point.x(), box.left(), box.right()),
            std::clamp(point.y(), box.top(), box.bottom())};
}

std::vector<PlacedLabel> lay_out_labels(const QRectF& plot, const std::vector<LabelRequest>& labels,
                                        const LabelSpacing& spacing) {
    LabelObstacles taken(labels, spacing);
    const qreal beside = spacing.dot_radius + spacing.gap + moved_tolerance;
    std::vector<PlacedLabel> placed;
    placed.reserve(labels.size());
    for (const LabelRequest& label : labels) {
        PlacedLabel result{.box = QRectF(), .fit = LabelFit::Dropped, .moved = false};
        if (label.size.height() <= plot.height()) {
            for (const qreal width :
                 label_widths(label.size.width(), plot.width(), spacing.min_width)) {
                const QSizeF size(width, label.size.height());
                if (const std::optional<QRectF> box = place_label(taken, label.dot, size, plot)) {
                    result = {.box = *box,
                              .fit = width < label.size.width() ? LabelFit::Elided : LabelFit::Full,
                              .moved = distance(*box, label.dot) > beside};
                    taken.add(*box);
                    break;
                }
            }
        }
        placed.push_back(result);
    }
    return placed;
}

}  // namespace scalelab
