#pragma once

#include <QList>
#include <QPointF>

#include <span>

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
// The same for a curve given as its xs and ys (of one size), without a list of all its points.
QList<QPointF> decimate_min_max(std::span<const double> xs, std::span<const double> ys,
                                qsizetype max_points = default_max_drawn_points);

// A band's edges (at `xs`, of one size with `low` and `high`) thinned for drawing to at most
// `max_points` points each, so that the band drawn still covers every point of it: the points are
// split into equal buckets, of which the low edge keeps the lowest point and the high edge the
// highest (one point per bucket and edge: an edge is never read as a line). Both ends are kept;
// bands of at most `max_points` points come back unchanged; non-finite values are never chosen.
// `max_points` as for decimate_min_max().
struct BandEdges {
    QList<QPointF> low;
    QList<QPointF> high;
};
BandEdges decimate_band(std::span<const double> xs, std::span<const double> low,
                        std::span<const double> high,
                        qsizetype max_points = default_max_drawn_points);

}  // namespace scalelab
