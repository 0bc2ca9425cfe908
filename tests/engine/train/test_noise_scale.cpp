// The gradient-noise-scale estimator on synthetic per-sample gradients with a known mean G and
// covariance Sigma = s^2 I: B_simple = tr(Sigma) / |G|^2 = D s^2 / |G|^2 must be recovered
// within 10%; and the trainer reports it on several devices and with accumulation.

#include <QtTest>
#include <random>

#include "data/synthetic.h"
#include "recording_sink.h"
#include "train/noise_scale.h"
#include "train/trainer.h"

using namespace scalelab;

class NoiseScale : public QObject {
    Q_OBJECT

  private slots:
    void recovers_b_simple_of_known_gradients_data() {
        QTest::addColumn<double>("sigma");
        QTest::addColumn<int>("devices");
        QTest::addColumn<int>("b_small");
        QTest::newRow("B_simple 12.5, 4 x 8") << 0.5 << 4 << 8;
        QTest::newRow("B_simple 200, 8 x 32") << 2.0 << 8 << 32;
        QTest::newRow("B_simple 0.5, 2 x 4") << 0.1 << 2 << 4;
    }
    void recovers_b_simple_of_known_gradients() {
        QFETCH(double, sigma);
        QFETCH(int, devices);
        QFETCH(int, b_small);
        constexpr int dims = 50;
        const double g = 1.0 / std::sqrt(double(dims));  // |G|^2 = 1
        const double expected = dims * sigma * sigma;
        // A device's gradient is the mean of b_small per-sample gradients G + N(0, s^2 I), so it
        // is drawn directly as G + N(0, s^2 / b_small I): the same distribution, b_small times
        // fewer draws.
        std::mt19937_64 rng(11);
        std::normal_distribution<double> noise(0.0, sigma / std::sqrt(double(b_small)));
        NoiseScaleEstimator estimator(0.999);
        const int b_big = devices * b_small;
        for (int step = 0; step < 6000; ++step) {
            std::vector<double> big(dims, 0.0);
            double small_sq = 0;
            for (int d = 0; d < devices; ++d) {
                double sq = 0;
                for (int i = 0; i < dims; ++i) {
                    const double small = g + noise(rng);
                    sq += small * small;
                    big[std::size_t(i)] += small / devices;
                }
                small_sq += sq / devices;
            }
            double big_sq = 0;
            for (double x : big)
                big_sq += x * x;
            estimator.add(small_sq, b_small, big_sq, b_big);
        }
        const double got = estimator.b_simple();
        QVERIFY2(std::abs(got - expected) < 0.1 * expected,
                 qPrintable(QString("B_simple %1, expected %2").arg(got).arg(expected)));
    }

    void undefined_without_two_batch_sizes() {
        NoiseScaleEstimator estimator;
        QVERIFY(std::isnan(estimator.b_simple()));
        estimator.add(1.0, 32, 1.0, 32);  // B_small == B_big: nothing to learn
        QVERIFY(std::isnan(estimator.b_simple()));
        estimator.add(0.0, 8, 0.0, 32);  // zero gradients never give NaN... nor a value
        QVERIFY(std::isnan(estimator.b_simple()));
    }

    // The step calls give add() the estimates the class comment defines: on one device the
    // micro-batches but the last as the small batches (each mean gradient's squared norm from
    // that of the gradient of loss_sum / samples), on several devices each device's gradient.
    void a_step_feeds_the_estimates_of_its_batches() {
        NoiseScaleEstimator by_step, by_hand;
        // One device, 4 micro-batches of 8, 8, 8 and 6 samples (30 in all).
        by_step.start_step(1, 4, 30);
        QVERIFY(by_step.reads_micro_batch(false));
        QVERIFY(!by_step.reads_micro_batch(true));
        by_step.add_micro_batch(0.5, 8);
        by_step.add_micro_batch(0.25, 8);
        by_step.add_micro_batch(0.75, 8);
        const float small = by_step.local_small_squared_norm(123.0);  // not a device's: ignored
        const double expected_small = (0.5 + 0.25 + 0.75) * std::pow(30.0 / 8, 2) / 3;
        QCOMPARE(small, float(expected_small));
        QVERIFY(by_step.reads_big_squared_norm(30));
        by_step.finish_step(small, 0.125, 30);
        by_hand.add(double(float(expected_small)), 30.0 / 4, 0.125, 30);
        QCOMPARE(by_step.b_simple(), by_hand.b_simple());

        // Two devices of 16 samples: each device's own gradient, the sum over both halved.
        by_step.start_step(2, 1, 16);
        QVERIFY(!by_step.reads_micro_batch(false));
        QCOMPARE(by_step.local_small_squared_norm(0.5), 0.5f);
        QVERIFY(by_step.reads_big_squared_norm(32));
        by_step.finish_step(0.5f + 0.75f, 0.25, 32);
        by_hand.add((0.5 + 0.75) / 2, 16, 0.25, 32);
        QCOMPARE(by_step.b_simple(), by_hand.b_simple());

        // One device, one batch: a single batch size, nothing to read.
        by_step.start_step(1, 1, 16);
        QVERIFY(!by_step.reads_micro_batch(false));
        QVERIFY(!by_step.reads_big_squared_norm(16));
    }

    void the_trainer_reports_it_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<int>("accumulation");
        QTest::addColumn<bool>("defined");
        QTest::newRow("2 devices") << 2 << 1 << true;
        QTest::newRow("1 device, 4 micro-batches") << 1 << 4 << true;
        QTest::newRow("1 device") << 1 << 1 << false;
    }
    void the_trainer_reports_it() {
        QFETCH(int, devices);
        QFETCH(int, accumulation);
        QFETCH(bool, defined);
        data::SyntheticConfig cfg;
        cfg.train = 1024;
        cfg.test = 128;
        const auto data = data::make_synthetic(cfg);
        RunSpec spec;
        spec.model = "mlp";
        spec.dataset = "synthetic";
        spec.devices = devices;
        spec.accumulation = accumulation;
        spec.batch = 16;
        spec.epochs = 1;
        spec.threads = 1;
        testing::RecordingSink sink;
        QCOMPARE(Trainer(spec, data, sink).run().status, RunStatus::Finished);
        const double last = sink.steps.back().noise_scale;
        QCOMPARE(std::isfinite(last), defined);
        if (defined)
            QVERIFY2(last > 0, qPrintable(QString::number(last)));
    }
};

QTEST_APPLESS_MAIN(NoiseScale)
#include "test_noise_scale.moc"
