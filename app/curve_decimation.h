#pragma once

#include <QList>
#include <QPointF>

namespace scalelab {

inline constexpr qsizetype default_max_drawn_points = 2000;

// Thins a curve for drawing to at most `max_points` points without hiding its spikes: the
// points, in x order, are split into equal buckets and each bucket keeps its lowest and highest
// point (in x order); the first and last points are always kept. A curve of at most `max_points`
// points comes back unchanged. Points with a non-finite y are never chosen from a bucket.
//
// `max_points` must be at least 4 (the ends and one bucket); less throws std::invalid_argument.
QList<QPointF> decimate_min_max(const QList<QPointF>& points,
                                qsizetype max_points = default_max_drawn_points);

}  // namespace scalelab
