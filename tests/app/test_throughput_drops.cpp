// bench train's warning after a batch sweep: a larger batch that trains more than 20% fewer
// images/s than a smaller one of the same model, threads and devices is named, with both.

#include <QtTest>

#include "cli/throughput_drops.h"

using scalelab::cli::throughput_drops;
using scalelab::cli::ThroughputPoint;

namespace {

ThroughputPoint point(int batch, double images_per_s, int threads = 1, const char* model = "mlp") {
    return ThroughputPoint{model, threads, 1, batch, images_per_s};
}

}  // namespace

class TestThroughputDrops : public QObject {
    Q_OBJECT

  private slots:
    void a_rising_and_levelling_curve_gives_no_warning() {
        QVERIFY(throughput_drops({point(8, 40000), point(16, 68000), point(32, 74000),
                                  point(64, 105000), point(128, 111000), point(256, 114000),
                                  point(512, 110000)})
                    .empty());
    }

    // The curve the mlp had before its linear layers moved to oneDNN's matmul.
    void a_cliff_names_the_batch_and_the_smaller_one_it_falls_below() {
        const auto warnings =
            throughput_drops({point(8, 48955), point(15, 63274), point(16, 22082), point(32, 32605),
                              point(64, 45229), point(128, 53897)});
        // 16, 32 and 64 are more than 20% below 15's 63274; 128 (53897) is 15% below it.
        QCOMPARE(warnings.size(), std::size_t(3));
        QVERIFY2(QString::fromStdString(warnings[0])
                     .startsWith("mlp on 1 device(s) of 1 thread(s): batch 16 trains 22082 "
                                 "images/s, 65% fewer than batch 15 (63274)"),
                 warnings[0].c_str());
        QVERIFY(QString::fromStdString(warnings[2]).contains("batch 64 trains 45229"));
    }

    void a_fall_of_20_percent_or_less_is_not_a_cliff() {
        QVERIFY(throughput_drops({point(8, 1000), point(16, 800)}).empty());
        QCOMPARE(throughput_drops({point(8, 1000), point(16, 799)}).size(), std::size_t(1));
    }

    // Against the best smaller batch, not only the one before: a slow slide is caught too.
    void a_slide_over_several_batches_is_caught() {
        const auto warnings = throughput_drops({point(8, 1000), point(16, 900), point(32, 750)});
        QCOMPARE(warnings.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(warnings[0]).contains("than batch 8 (1000)"));
    }

    void only_the_same_model_threads_and_devices_are_compared() {
        QVERIFY(throughput_drops({point(8, 1000, 1), point(16, 100, 2)}).empty());
        QVERIFY(throughput_drops({point(8, 1000, 1, "mlp"), point(16, 100, 1, "cnn")}).empty());
        ThroughputPoint two_devices = point(16, 100);
        two_devices.devices = 2;
        QVERIFY(throughput_drops({point(8, 1000), two_devices}).empty());
    }

    // bench train's loops put the batch inside the model; the order does not matter.
    void points_out_of_batch_order_are_compared_by_batch() {
        const auto warnings = throughput_drops({point(128, 200), point(8, 1000)});
        QCOMPARE(warnings.size(), std::size_t(1));
        QVERIFY(QString::fromStdString(warnings[0]).contains("batch 128 trains 200"));
    }

    void a_repeated_batch_is_not_compared_with_itself() {
        QVERIFY(throughput_drops({point(32, 1000), point(32, 500)}).empty());
    }
};

QTEST_APPLESS_MAIN(TestThroughputDrops)
#include "test_throughput_drops.moc"
