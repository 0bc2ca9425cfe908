#include <QtTest>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "curve_smoothing.h"

using scalelab::smooth_ema;

class TestCurveSmoothing : public QObject {
    Q_OBJECT

  private slots:
    // Weight 0.5 on {1, 2, 3}, step by step:
    //   n=1: last = 0.5*0   + 0.5*1 = 0.5,   out = 0.5   / (1 - 0.5)   = 1
    //   n=2: last = 0.5*0.5 + 0.5*2 = 1.25,  out = 1.25  / (1 - 0.25)  = 5/3
    //   n=3: last = 0.5*1.25+ 0.5*3 = 2.125, out = 2.125 / (1 - 0.125) = 17/7
    void debiasedAverageOfAShortSeries() {
        const std::vector<double> values = {1.0, 2.0, 3.0};
        const std::vector<double> smoothed = smooth_ema(values, 0.5);
        QCOMPARE(smoothed.size(), std::size_t{3});
        QCOMPARE(smoothed[0], 1.0);
        QCOMPARE(smoothed[1], 5.0 / 3.0);
        QCOMPARE(smoothed[2], 17.0 / 7.0);
    }

    // Weight 0.9 on {10, 0}: last = 1, out = 1/0.1 = 10; last = 0.9, out = 0.9/0.19.
    void heavyWeightFollowsTheDataFromTheFirstPoint() {
        const std::vector<double> values = {10.0, 0.0};
        const std::vector<double> smoothed = smooth_ema(values, 0.9);
        QVERIFY(std::abs(smoothed[0] - 10.0) < 1e-12);
        QVERIFY(std::abs(smoothed[1] - 0.9 / 0.19) < 1e-12);
    }

    // A NaN stays where it is and neither advances n nor touches the average: the points around
    // it smooth as if it were not there.
    void nonFiniteValuesPassThrough() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const double inf = std::numeric_limits<double>::infinity();
        const std::vector<double> values = {1.0, nan, 2.0, inf, 3.0};
        const std::vector<double> smoothed = smooth_ema(values, 0.5);
        QCOMPARE(smoothed.size(), values.size());
        QVERIFY(std::isnan(smoothed[1]));
        QCOMPARE(smoothed[3], inf);
        QCOMPARE(smoothed[0], 1.0);
        QCOMPARE(smoothed[2], 5.0 / 3.0);
        QCOMPARE(smoothed[4], 17.0 / 7.0);
    }

    void constantSeriesIsReturnedUnsmoothed() {
        const double nan = std::numeric_limits<double>::quiet_NaN();
        const std::vector<double> values = {0.1, 0.1, nan, 0.1, 0.1};
        const std::vector<double> smoothed = smooth_ema(values, 0.99);
        QCOMPARE(smoothed[0], 0.1);
        QVERIFY(std::isnan(smoothed[2]));
        QCOMPARE(smoothed[4], 0.1);
    }

    void weightZeroReturnsTheInput() {
        const std::vector<double> values = {3.0, -1.0, 7.5};
        QCOMPARE(smooth_ema(values, 0.0), values);
    }

    // Thousands of points: w^n falls below what 1 - w^n can tell from 0; every value still
    // follows the formula, evaluated here literally.
    void longSeriesFollowsTheFormula() {
        std::vector<double> values;
        for (int i = 0; i < 5000; ++i)
            values.push_back(std::sin(i * 0.37) + i * 0.001);
        const std::vector<double> smoothed = smooth_ema(values, 0.6);
        double last = 0.0;
        for (std::size_t n = 1; n <= values.size(); ++n) {
            last = last * 0.6 + 0.4 * values[n - 1];
            const double expected = last / (1.0 - std::pow(0.6, double(n)));
            QVERIFY2(
                std::abs(smoothed[n - 1] - expected) <= 1e-12 * std::max(1.0, std::abs(expected)),
                qPrintable(QStringLiteral("point %1").arg(n)));
        }
    }

    void emptySeriesStaysEmpty() { QVERIFY(smooth_ema(std::vector<double>{}, 0.6).empty()); }

    void weightOutsideTheRangeIsRejected() {
        const std::vector<double> values = {1.0, 2.0};
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, smooth_ema(values, 1.0));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, smooth_ema(values, -0.1));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument,
                                 smooth_ema(values, std::numeric_limits<double>::quiet_NaN()));
    }
};

QTEST_MAIN(TestCurveSmoothing)
#include "test_curve_smoothing.moc"
