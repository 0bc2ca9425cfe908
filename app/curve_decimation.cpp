#include "curve_decimation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace scalelab {

namespace {

void check_room(qsizetype max_points) {
    if (max_points < 4)
        throw std::invalid_argument("decimation needs room for at least 4 points, got " +
                                    std::to_string(max_points));
}

// Splits the interior points 1 .. count - 2 into `buckets` equal buckets and calls
// visit(lowest, highest) with the indices of each bucket's lowest and highest finite y(i);
// buckets with nothing finite are skipped. `Find` says which of the two are looked for (a
// band's edge needs one): the other index passed is -1.
enum class Find { Both, Lowest, Highest };
template <Find find, class Y, class Visit>
void min_max_buckets(qsizetype count, qsizetype buckets, Y y, Visit visit) {
    const qsizetype interior = count - 2;
    for (qsizetype bucket = 0; bucket < buckets; ++bucket) {
        const qsizetype begin = 1 + bucket * interior / buckets;
        const qsizetype end = 1 + (bucket + 1) * interior / buckets;
        qsizetype lowest = -1;
        qsizetype highest = -1;
        double low = 0.0;
        double high = 0.0;
        for (qsizetype i = begin; i < end; ++i) {
            const double value = y(i);
            if (!std::isfinite(value))
                continue;
            if (find != Find::Highest && (lowest < 0 || value < low)) {
                lowest = i;
                low = value;
            }
            if (find != Find::Lowest && (highest < 0 || value > high)) {
                highest = i;
                high = value;
            }
        }
        if (lowest >= 0 || highest >= 0)
            visit(lowest, highest);
    }
}

// A curve of `count` points, point(i) the i-th, decimated as decimate_min_max() says.
template <class Point>
QList<QPointF> decimate(qsizetype count, qsizetype max_points, Point point) {
    check_room(max_points);
    QList<QPointF> kept;
    if (count <= max_points) {
        kept.reserve(count);
        for (qsizetype i = 0; i < count; ++i)
            kept.append(point(i));
        return kept;
    }
    // The interior fills buckets of two points.
    const qsizetype buckets = (max_points - 2) / 2;
    kept.reserve(2 + 2 * buckets);
    kept.append(point(0));
    min_max_buckets<Find::Both>(
        count, buckets, [&](qsizetype i) { return point(i).y(); },
        [&](qsizetype lowest, qsizetype highest) {
            kept.append(point(std::min(lowest, highest)));
            if (lowest != highest)
                kept.append(point(std::max(lowest, highest)));
        });
    kept.append(point(count - 1));
    return kept;
}

// One edge of a band: each bucket's lowest point (`high` false) or highest.
QList<QPointF> decimate_edge(std::span<const double> xs, std::span<const double> ys,
                             qsizetype max_points, bool high) {
    const qsizetype count = qsizetype(xs.size());
    const auto point = [&](qsizetype i) { return QPointF(xs[std::size_t(i)], ys[std::size_t(i)]); };
    if (count <= max_points)
        return decimate(count, max_points, point);
    QList<QPointF> kept;
    kept.reserve(max_points);
    kept.append(point(0));
    const auto y = [&](qsizetype i) { return ys[std::size_t(i)]; };
    const auto keep = [&](qsizetype lowest, qsizetype highest) {
        kept.append(point(high ? highest : lowest));
    };
    if (high)
        min_max_buckets<Find::Highest>(count, max_points - 2, y, keep);
    else
        min_max_buckets<Find::Lowest>(count, max_points - 2, y, keep);
    kept.append(point(count - 1));
    return kept;
}

}  // namespace

QList<QPointF> decimate_min_max(const QList<QPointF>& points, qsizetype max_points) {
    check_room(max_points);
    if (points.size() <= max_points)
        return points;  // shared, not copied
    return decimate(points.size(), max_points, [&](qsizetype i) { return points[i]; });
}

QList<QPointF> decimate_min_max(std::span<const double> xs, std::span<const double> ys,
                                qsizetype max_points) {
    return decimate(qsizetype(xs.size()), max_points,
                    [&](qsizetype i) { return QPointF(xs[std::size_t(i)], ys[std::size_t(i)]); });
}

BandEdges decimate_band(std::span<const double> xs, std::span<const double> low,
                        std::span<const double> high, qsizetype max_points) {
    check_room(max_points);
    return {decimate_edge(xs, low, max_points, false), decimate_edge(xs, high, max_points, true)};
}

}  // namespace scalelab
