#include "label_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <utility>

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

// Whether the segment from `from` to `to` passes through the inside of `box` (Liang-Barsky: the
// part of the segment between each pair of the box's edges).
bool crosses(QPointF from, QPointF to, const QRectF& box) {
    const QPointF way = to - from;
    const std::array<std::pair<qreal, qreal>, 4> edges = {{{-way.x(), from.x() - box.left()},
                                                           {way.x(), box.right() - from.x()},
                                                           {-way.y(), from.y() - box.top()},
                                                           {way.y(), box.bottom() - from.y()}}};
    qreal enter = 0;
    qreal leave = 1;
    for (const auto& [towards, room] : edges) {
        if (towards == 0) {
            if (room <= 0)
                return false;
            continue;
        }
        const qreal at = room / towards;
        if (towards < 0)
            enter = std::max(enter, at);
        else
            leave = std::min(leave, at);
        if (enter >= leave)
            return false;
    }
    return true;
}

// `box` moved the least that puts it inside `plot` (which it is no larger than).
QRectF clamped(QRectF box, const QRectF& plot) {
    box.moveLeft(std::clamp(box.left(), plot.left(), plot.right() - box.width()));
    box.moveTop(std::clamp(box.top(), plot.top(), plot.bottom() - box.height()));
    return box;
}

// What a new box must not overlap: every dot and the boxes placed so far, each grown by the
// distance a box keeps from it. Unless `lines_cross` allows it, the line from a moved box to its
// dot must not pass under a box either: a stack's far boxes go where their lines stay clear.
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
        boxes_.push_back(box);
    }

    void letLinesCross(bool cross) { lines_cross_ = cross; }

    // Whether `box` is beside `dot`, needing no line to it.
    bool besideIt(const QRectF& box, QPointF dot) const {
        return distance(box, dot) <= spacing_.dot_radius + spacing_.gap + moved_tolerance;
    }

    // The box of `size` on `side` of `dot`, moved into `plot`; nothing where that is taken.
    std::optional<QRectF> beside(QPointF dot, QSizeF size, Side side, const QRectF& plot) const {
        const QRectF box = clamped(besideDot(dot, size, side), plot);
        if (!free(box, dot, rects_))
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
            if (onItsSide(box, dot, side) && free(box, dot, in_band) &&
                (!best || distance(box, dot) < distance(*best, dot)))
                best = box;
        }
        return best;
    }

  private:
    // Whether a slid box is still wholly on its side of the dot (not moved across it by the
    // plot's edge): a stack beside a dot then leaves the lines of its far boxes a clear way past
    // the near ones, between the stack and the dot.
    bool onItsSide(const QRectF& box, QPointF dot, Side side) const {
        const qreal away = spacing_.dot_radius + spacing_.gap;
        switch (side) {
            case Side::Right:
                return box.left() >= dot.x() + away;
            case Side::Left:
                return box.right() <= dot.x() - away;
            case Side::Above:
                return box.bottom() <= dot.y() - away;
            case Side::Below:
                return box.top() >= dot.y() + away;
        }
        return false;
    }

    // Whether `box` for `dot` overlaps none of `taken` (all that could be in its way) and, unless
    // lines may cross, its line passes under no box.
    bool free(const QRectF& box, QPointF dot, const std::vector<QRectF>& taken) const {
        if (std::any_of(taken.begin(), taken.end(),
                        [&box](const QRectF& rect) { return rect.intersects(box); }))
            return false;
        if (lines_cross_ || besideIt(box, dot))
            return true;
        const QPointF end = nearest_point(box, dot);
        return std::none_of(boxes_.begin(), boxes_.end(),
                            [&](const QRectF& other) { return crosses(dot, end, other); });
    }

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
    std::vector<QRectF> rects_;  // grown by the distance kept
    std::vector<QRectF> boxes_;  // the boxes placed, as they are
    bool lines_cross_ = false;
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
    std::vector<PlacedLabel> placed;
    placed.reserve(labels.size());
    for (const LabelRequest& label : labels) {
        const std::vector<qreal> widths =
            label.size.height() <= plot.height()
                ? label_widths(label.size.width(), plot.width(), spacing.min_width)
                : std::vector<qreal>();
        std::optional<QRectF> box;
        // A line passing under another box only where no box, however narrow, finds room
        // without one.
        for (const bool lines_cross : {false, true}) {
            taken.letLinesCross(lines_cross);
            for (auto width = widths.begin(); !box && width != widths.end(); ++width)
                box = place_label(taken, label.dot, QSizeF(*width, label.size.height()), plot);
            if (box)
                break;
        }
        if (!box) {
            placed.push_back({.box = QRectF(), .fit = LabelFit::Dropped, .moved = false});
            continue;
        }
        taken.add(*box);
        placed.push_back(
            {.box = *box,
             .fit = box->width() < label.size.width() ? LabelFit::Elided : LabelFit::Full,
             .moved = !taken.besideIt(*box, label.dot)});
    }
    return placed;
}

}  // namespace scalelab
