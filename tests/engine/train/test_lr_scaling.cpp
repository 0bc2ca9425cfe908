// effective_lr: the base lr times the scaling rule of the global batch (devices x batch per
// device x accumulation) over the reference batch, and the schedule that starts from it.

#include <QTest>

#include <algorithm>
#include <cmath>

#include "optim/lr_schedule.h"
#include "train/run_spec.h"

using scalelab::effective_lr;
using scalelab::LrScaling;
using scalelab::RunSpec;
using scalelab::WarmupKind;
using scalelab::WarmupUnit;
using scalelab::optim::LrSchedule;

namespace {

#define CHECK_NEAR(actual, expected)                                                          \
    do {                                                                                      \
        const double actual_ = (actual);                                                      \
        QVERIFY2(std::abs(actual_ - (expected)) <= 1e-12 * std::max(1.0, std::abs(expected)), \
                 qPrintable(QStringLiteral("got %1, expected %2")                             \
                                .arg(actual_, 0, 'g', 17)                                     \
                                .arg(static_cast<double>(expected), 0, 'g', 17)));            \
    } while (false)

// 4 devices x batch 128 = global batch 512, twice the reference 256.
RunSpec spec_with(LrScaling rule) {
    RunSpec spec;
    spec.lr = 0.1;
    spec.devices = 4;
    spec.batch = 128;
    spec.accumulation = 1;
    spec.reference_batch = 256;
    spec.lr_scaling = rule;
    spec.warmup_length = 0;
    return spec;
}

}  // namespace

class TestLrScaling : public QObject {
    Q_OBJECT

  private slots:
    void none_keeps_the_lr() {
        CHECK_NEAR(effective_lr(spec_with(LrScaling::None)), 0.1);
        RunSpec big = spec_with(LrScaling::None);
        big.devices = 16;
        CHECK_NEAR(effective_lr(big), 0.1);
    }

    void linear_multiplies_by_the_batch_ratio() {
        CHECK_NEAR(effective_lr(spec_with(LrScaling::Linear)), 0.2);  // 512 / 256 = 2
        RunSpec one = spec_with(LrScaling::Linear);
        one.devices = 2;  // 256: the reference itself
        CHECK_NEAR(effective_lr(one), 0.1);
        RunSpec small = spec_with(LrScaling::Linear);
        small.devices = 1;
        small.batch = 64;  // 64 / 256 = 1/4: scales down too
        CHECK_NEAR(effective_lr(small), 0.025);
    }

    void sqrt_multiplies_by_its_square_root() {
        CHECK_NEAR(effective_lr(spec_with(LrScaling::Sqrt)), 0.1 * 1.4142135623730951);
        RunSpec small = spec_with(LrScaling::Sqrt);
        small.devices = 1;
        small.batch = 64;  // sqrt(1/4) = 1/2
        CHECK_NEAR(effective_lr(small), 0.05);
    }

    void accumulation_counts_in_the_global_batch() {
        RunSpec linear = spec_with(LrScaling::Linear);
        linear.accumulation = 2;  // 4 x 128 x 2 = 1024 = 4 x 256
        CHECK_NEAR(effective_lr(linear), 0.4);
        RunSpec sqrt = spec_with(LrScaling::Sqrt);
        sqrt.accumulation = 2;
        CHECK_NEAR(effective_lr(sqrt), 0.2);  // sqrt(4) = 2
    }

    void the_schedule_starts_from_the_effective_lr() {
        RunSpec spec = spec_with(LrScaling::Linear);
        spec.epochs = 2;
        spec.warmup = WarmupKind::PerEpoch;
        spec.warmup_length = 1;
        spec.warmup_unit = WarmupUnit::Epochs;
        spec.warmup_start_factor = 0.25;  // 1/N for 4 devices
        LrSchedule schedule(spec, 10);
        CHECK_NEAR(schedule.config().base_lr, 0.2);
        CHECK_NEAR(schedule.lr(0), 0.05);  // 0.2 x 0.25
        CHECK_NEAR(schedule.lr(10), 0.2);
    }
};

QTEST_APPLESS_MAIN(TestLrScaling)
#include "test_lr_scaling.moc"
