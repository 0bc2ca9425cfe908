#include <QtTest>

#include <algorithm>
#include <cmath>
#include <span>
#include <stdexcept>
#include <vector>

#include "curve_decimation.h"

using scalelab::BandEdges;
using scalelab::decimate_band;
using scalelab::decimate_min_max;

namespace {

// A noisy curve with one deep dip and one tall spike at known places.
QList<QPointF> spiky_curve(int count, int dip_at, int spike_at) {
    QList<QPointF> points;
    for (int i = 0; i < count; ++i) {
        double y = std::sin(i * 0.01) + 0.1 * std::sin(i * 1.7);
        if (i == dip_at)
            y = -50.0;
        if (i == spike_at)
            y = 80.0;
        points.append(QPointF(i, y));
    }
    return points;
}

bool contains(const QList<QPointF>& points, QPointF point) {
    return std::find(points.begin(), points.end(), point) != points.end();
}

}  // namespace

class TestCurveDecimation : public QObject {
    Q_OBJECT

  private slots:
    void keepsGlobalExtremesAndBothEnds() {
        const QList<QPointF> points = spiky_curve(10'000, 4321, 8765);
        const QList<QPointF> kept = decimate_min_max(points, 2000);
        QVERIFY(kept.size() <= 2000);
        QVERIFY(kept.size() > 1000);
        QCOMPARE(kept.front(), points.front());
        QCOMPARE(kept.back(), points.back());
        QVERIFY(contains(kept, points[4321]));
        QVERIFY(contains(kept, points[8765]));
    }

    void keepsXOrder() {
        const QList<QPointF> kept = decimate_min_max(spiky_curve(5000, 10, 20), 100);
        QVERIFY(std::is_sorted(kept.begin(), kept.end(),
                               [](QPointF a, QPointF b) { return a.x() < b.x(); }));
    }

    void neverMoreThanTheLimit() {
        for (const qsizetype limit : {4, 5, 7, 100, 1999, 2000}) {
            for (const qsizetype count : {limit + 1, 2 * limit + 3, qsizetype{10'007}}) {
                const QList<QPointF> kept = decimate_min_max(spiky_curve(int(count), 1, 2), limit);
                QVERIFY2(kept.size() <= limit,
                         qPrintable(QStringLiteral("%1 points from %2 with limit %3")
                                        .arg(kept.size())
                                        .arg(count)
                                        .arg(limit)));
            }
        }
    }

    void smallCurvesAreUntouched() {
        const QList<QPointF> points = spiky_curve(2000, 5, 6);
        QCOMPARE(decimate_min_max(points, 2000), points);
        QVERIFY(decimate_min_max({}, 2000).isEmpty());
    }

    void nonFiniteValuesAreNotChosen() {
        QList<QPointF> points = spiky_curve(1000, 1, 2);
        for (int i = 100; i < 200; ++i)
            points[i].setY(std::nan(""));
        const QList<QPointF> kept = decimate_min_max(points, 50);
        QVERIFY(std::all_of(kept.begin(), kept.end(),
                            [](QPointF point) { return std::isfinite(point.y()); }));
    }

    // The curve given as xs and ys is thinned as the same points given as a list.
    void xsAndYsAreThinnedAsPoints() {
        const QList<QPointF> points = spiky_curve(10'000, 4321, 8765);
        std::vector<double> xs;
        std::vector<double> ys;
        for (const QPointF point : points) {
            xs.push_back(point.x());
            ys.push_back(point.y());
        }
        QCOMPARE(decimate_min_max(xs, ys, 2000), decimate_min_max(points, 2000));
        QCOMPARE(decimate_min_max(std::span(xs).first(50), std::span(ys).first(50), 2000),
                 points.first(50));
    }

    // Each edge keeps one point per bucket, the outermost: the band drawn still covers the
    // deepest dip of its low edge and the tallest spike of its high edge.
    void bandEdgesKeepTheirOutermostPoints() {
        const QList<QPointF> curve = spiky_curve(10'000, 4321, 8765);
        std::vector<double> xs;
        std::vector<double> low;
        std::vector<double> high;
        for (const QPointF point : curve) {
            xs.push_back(point.x());
            low.push_back(point.y() - 1.0);
            high.push_back(point.y() + 1.0);
        }
        const BandEdges band = decimate_band(xs, low, high, 500);
        QCOMPARE(band.low.size(), 500);
        QCOMPARE(band.high.size(), 500);
        QVERIFY(contains(band.low, QPointF(4321, -51.0)));
        QVERIFY(contains(band.high, QPointF(8765, 81.0)));
        QVERIFY(!contains(band.low, QPointF(8765, 79.0)));  // the spike is no low point
        QCOMPARE(band.low.front(), QPointF(0, low.front()));
        QCOMPARE(band.high.back(), QPointF(9999, high.back()));
        QVERIFY(std::is_sorted(band.low.begin(), band.low.end(),
                               [](QPointF a, QPointF b) { return a.x() < b.x(); }));

        const BandEdges small = decimate_band(std::span(xs).first(10), std::span(low).first(10),
                                              std::span(high).first(10), 500);
        QCOMPARE(small.low.size(), 10);
        QCOMPARE(small.high[3], QPointF(3, high[3]));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decimate_band(xs, low, high, 3));
    }

    void tooSmallALimitIsRejected() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, decimate_min_max(spiky_curve(10, 1, 2), 3));
    }
};

QTEST_MAIN(TestCurveDecimation)
#include "test_curve_decimation.moc"
