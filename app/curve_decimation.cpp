#include "curve_decimation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace scalelab {

QList<QPointF> decimate_min_max(const QList<QPointF>& points, qsizetype max_points) {
    if (max_points < 4)
        throw std::invalid_argument("decimation needs room for at least 4 points, got " +
                                    std::to_string(max_points));
    const qsizetype count = points.size();
    if (count <= max_points)
        return points;

    // The interior points (all but the first and last) fill `buckets` buckets of two points.
    const qsizetype interior = count - 2;
    const qsizetype buckets = (max_points - 2) / 2;
    QList<QPointF> kept;
    kept.reserve(2 + 2 * buckets);
    kept.append(points.front());
    for (qsizetype bucket = 0; bucket < buckets; ++bucket) {
        const qsizetype begin = 1 + bucket * interior / buckets;
        const qsizetype end = 1 + (bucket + 1) * interior / buckets;
        qsizetype lowest = -1;
        qsizetype highest = -1;
        for (qsizetype i = begin; i < end; ++i) {
            const double y = points[i].y();
            if (!std::isfinite(y))
                continue;
            if (lowest < 0 || y < points[lowest].y())
                lowest = i;
            if (highest < 0 || y > points[highest].y())
                highest = i;
        }
        if (lowest < 0)
            continue;  // nothing finite in this bucket
        const qsizetype first = std::min(lowest, highest);
        const qsizetype second = std::max(lowest, highest);
        kept.append(points[first]);
        if (second != first)
            kept.append(points[second]);
    }
    kept.append(points.back());
    return kept;
}

}  // namespace scalelab
