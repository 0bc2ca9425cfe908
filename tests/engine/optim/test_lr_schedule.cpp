// LrSchedule against values worked out by hand from the formulas in lr_schedule.h, at the
// steps where schedules change: either side of epoch boundaries, the ends of a cosine or poly
// run and the start, middle, end and just after each kind of warm-up.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include "error.h"
#include "optim/lr_schedule.h"
#include "train/run_spec.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::RunSpec;
using scalelab::ScheduleKind;
using scalelab::WarmupKind;
using scalelab::WarmupUnit;
using scalelab::optim::LrSchedule;
using scalelab::optim::LrScheduleConfig;

namespace {

#define CHECK_LR(schedule, step, expected)                                                    \
    do {                                                                                      \
        const double actual_ = (schedule).lr(step);                                           \
        QVERIFY2(std::abs(actual_ - (expected)) <= 1e-12 * std::max(1.0, std::abs(expected)), \
                 qPrintable(QStringLiteral("step %1: got %2, expected %3")                    \
                                .arg(step)                                                    \
                                .arg(actual_, 0, 'g', 17)                                     \
                                .arg(static_cast<double>(expected), 0, 'g', 17)));            \
    } while (false)

// lr 0.1, no warm-up, 2 epochs: each test changes what it is about.
RunSpec base_spec() {
    RunSpec spec;
    spec.lr = 0.1;
    spec.epochs = 2;
    spec.warmup_length = 0;
    return spec;
}

ErrorKind kind_of_error(const RunSpec& spec, int steps_per_epoch) {
    try {
        LrSchedule schedule(spec, steps_per_epoch);
    } catch (const Error& error) {
        return error.kind();
    }
    return ErrorKind::Internal;  // no error: fails a comparison against InvalidSpec
}

// The message of the InvalidSpec error the schedule throws; empty when it throws none.
std::string message_of(const RunSpec& spec, int steps_per_epoch) {
    try {
        LrSchedule schedule(spec, steps_per_epoch);
    } catch (const Error& error) {
        return error.kind() == ErrorKind::InvalidSpec ? std::string(error.what()) : std::string();
    }
    return {};
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

}  // namespace

class TestLrSchedule : public QObject {
    Q_OBJECT

  private slots:
    void constant() {
        LrSchedule schedule(base_spec(), 10);
        CHECK_LR(schedule, 0, 0.1);
        CHECK_LR(schedule, 9, 0.1);
        CHECK_LR(schedule, 10, 0.1);
        CHECK_LR(schedule, 123456, 0.1);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{0});
        QCOMPARE(schedule.total_steps(), std::int64_t{20});
    }

    void step_schedule_at_boundaries() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Step;
        spec.step_epochs = 2;
        spec.gamma = 0.1;
        LrSchedule schedule(spec, 10);
        // epochs 0-1 (steps 0-19): 0.1; epochs 2-3 (steps 20-39): 0.01; epoch 4: 0.001
        CHECK_LR(schedule, 0, 0.1);
        CHECK_LR(schedule, 10, 0.1);  // an epoch boundary that is not a decay boundary
        CHECK_LR(schedule, 19, 0.1);
        CHECK_LR(schedule, 20, 0.01);
        CHECK_LR(schedule, 21, 0.01);
        CHECK_LR(schedule, 39, 0.01);
        CHECK_LR(schedule, 40, 0.001);
        CHECK_LR(schedule, 41, 0.001);
    }

    void multistep_at_boundaries() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::MultiStep;
        spec.milestones = {3, 1};  // unsorted on purpose
        spec.gamma = 0.5;
        LrSchedule schedule(spec, 10);
        CHECK_LR(schedule, 0, 0.1);
        CHECK_LR(schedule, 9, 0.1);    // epoch 0
        CHECK_LR(schedule, 10, 0.05);  // epoch 1: one milestone passed
        CHECK_LR(schedule, 11, 0.05);
        CHECK_LR(schedule, 29, 0.05);   // epoch 2
        CHECK_LR(schedule, 30, 0.025);  // epoch 3: both passed
        CHECK_LR(schedule, 31, 0.025);
        CHECK_LR(schedule, 1000, 0.025);
    }

    void multistep_repeated_and_zero_milestones() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::MultiStep;
        spec.gamma = 0.5;
        spec.milestones = {2, 2};  // PyTorch counts a repeated milestone twice
        LrSchedule repeated(spec, 4);
        CHECK_LR(repeated, 7, 0.1);
        CHECK_LR(repeated, 8, 0.025);
        spec.milestones = {0};  // decays from the first step
        LrSchedule zero(spec, 4);
        CHECK_LR(zero, 0, 0.05);
    }

    void cosine_ends_and_middle() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Cosine;
        spec.min_lr = 0.001;
        spec.epochs = 2;
        LrSchedule schedule(spec, 10);  // total 20 steps
        // step 0: cos 0 = 1: the full lr
        CHECK_LR(schedule, 0, 0.1);
        // step 5: 0.001 + 0.099 * (1 + cos(pi/4)) / 2 = 0.001 + 0.099 * 0.853553390593274
        CHECK_LR(schedule, 5, 0.001 + 0.099 * 0.8535533905932737);
        // steps 9 and 10 differ: cosine anneals per step, not per epoch;
        // step 10: cos(pi/2) = 0: the midpoint 0.0505
        QVERIFY(schedule.lr(10) < schedule.lr(9));
        CHECK_LR(schedule, 10, 0.0505);
        // last step 19: (1 + cos(0.95 pi)) / 2 = (1 - 0.987688340595138) / 2 = 0.006155829702431
        CHECK_LR(schedule, 19, 0.001 + 0.099 * 0.006155829702431115);
        // past the end of the run: the floor
        CHECK_LR(schedule, 20, 0.001);
        CHECK_LR(schedule, 25, 0.001);
    }

    void poly_first_middle_last_and_after() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Poly;
        spec.poly_power = 2;
        spec.epochs = 2;
        LrSchedule schedule(spec, 10);              // total 20 steps
        CHECK_LR(schedule, 0, 0.1);                 // (1 - 0)^2 = 1
        CHECK_LR(schedule, 1, 0.09025);             // 0.1 * (19/20)^2 = 0.1 * 0.9025
        CHECK_LR(schedule, 10, 0.025);              // middle: 0.1 * (1/2)^2
        CHECK_LR(schedule, 19, 0.00025);            // last step: 0.1 * (1/20)^2 = 0.1 * 0.0025
        CHECK_LR(schedule, 20, 0.0);                // the end of the run
        CHECK_LR(schedule, 1000, 0.0);              // stays at 0, never negative or rising
        QVERIFY(schedule.lr(9) > schedule.lr(10));  // per step, not per epoch

        spec.poly_power = 0.5;
        LrSchedule root(spec, 10);
        CHECK_LR(root, 15, 0.05);  // 0.1 * (5/20)^0.5 = 0.1 * 0.5
        spec.poly_power = 1;
        LrSchedule linear(spec, 10);
        CHECK_LR(linear, 5, 0.075);  // 0.1 * (1 - 5/20)
    }

    void exp_around_epoch_boundaries() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Exp;
        spec.gamma = 0.5;
        LrSchedule schedule(spec, 10);
        CHECK_LR(schedule, 0, 0.1);
        CHECK_LR(schedule, 9, 0.1);    // the step before the boundary: epoch 0
        CHECK_LR(schedule, 10, 0.05);  // at it: epoch 1, 0.1 * 0.5
        CHECK_LR(schedule, 11, 0.05);  // after: still epoch 1
        CHECK_LR(schedule, 19, 0.05);
        CHECK_LR(schedule, 20, 0.025);  // epoch 2: 0.1 * 0.25
        CHECK_LR(schedule, 21, 0.025);
        CHECK_LR(schedule, 30, 0.0125);  // past the run's 2 epochs it keeps decaying
    }

    void warmup_in_steps() {
        RunSpec spec = base_spec();
        spec.warmup = WarmupKind::Gradual;
        spec.warmup_length = 4;
        spec.warmup_unit = WarmupUnit::Steps;
        spec.warmup_start_factor = 0.25;
        LrSchedule schedule(spec, 10);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{4});
        CHECK_LR(schedule, 0, 0.025);    // factor 0.25
        CHECK_LR(schedule, 2, 0.0625);   // 0.25 + 0.75 * 2/4 = 0.625
        CHECK_LR(schedule, 3, 0.08125);  // 0.25 + 0.75 * 3/4 = 0.8125
        CHECK_LR(schedule, 4, 0.1);      // end: full rate
        CHECK_LR(schedule, 5, 0.1);
    }

    void warmup_in_epochs_is_per_step() {
        RunSpec spec = base_spec();
        spec.warmup = WarmupKind::Gradual;
        spec.warmup_length = 2;  // epochs: W = 20 steps at 10 steps per epoch
        spec.warmup_unit = WarmupUnit::Epochs;
        spec.warmup_start_factor = 0.1;
        spec.epochs = 5;
        LrSchedule schedule(spec, 10);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{20});
        CHECK_LR(schedule, 0, 0.01);     // factor 0.1
        CHECK_LR(schedule, 1, 0.0145);   // 0.1 + 0.9 * 1/20 = 0.145: rises within the epoch
        CHECK_LR(schedule, 10, 0.055);   // middle: 0.1 + 0.9 * 10/20 = 0.55
        CHECK_LR(schedule, 19, 0.0955);  // 0.1 + 0.9 * 19/20 = 0.955
        CHECK_LR(schedule, 20, 0.1);     // end
        CHECK_LR(schedule, 21, 0.1);
    }

    void warmup_fractional_epochs() {
        RunSpec spec = base_spec();
        spec.warmup_length = 0.25;  // a quarter epoch of 10 steps: W = 2.5 steps
        spec.warmup_start_factor = 0.0;
        LrSchedule schedule(spec, 10);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{3});  // steps 0, 1, 2 are below 1
        CHECK_LR(schedule, 0, 0.0);
        CHECK_LR(schedule, 1, 0.04);  // 1 / 2.5 = 0.4
        CHECK_LR(schedule, 2, 0.08);  // 2 / 2.5 = 0.8
        CHECK_LR(schedule, 3, 0.1);
    }

    void per_epoch_warmup_is_stepped_per_epoch() {
        RunSpec spec = base_spec();
        spec.warmup = WarmupKind::PerEpoch;
        spec.warmup_length = 4;           // epochs
        spec.warmup_start_factor = 0.25;  // 1/N for N = 4 devices
        spec.epochs = 5;
        LrSchedule schedule(spec, 10);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{40});
        // epoch e: 0.25 + 0.75 * e / 4 = 0.25, 0.4375, 0.625, 0.8125, then 1
        CHECK_LR(schedule, 0, 0.025);  // start: all of epoch 0 at the start factor
        CHECK_LR(schedule, 1, 0.025);  // constant within the epoch
        CHECK_LR(schedule, 9, 0.025);
        CHECK_LR(schedule, 10, 0.04375);  // jumps at the boundary
        CHECK_LR(schedule, 19, 0.04375);
        CHECK_LR(schedule, 20, 0.0625);  // middle: epoch 2
        CHECK_LR(schedule, 29, 0.0625);
        CHECK_LR(schedule, 30, 0.08125);  // the ramp's last epoch
        CHECK_LR(schedule, 39, 0.08125);  // end: its last step
        CHECK_LR(schedule, 40, 0.1);      // just after: the full rate
        CHECK_LR(schedule, 41, 0.1);
    }

    void per_epoch_warmup_fractional_epochs() {
        RunSpec spec = base_spec();
        spec.warmup = WarmupKind::PerEpoch;
        spec.warmup_length = 2.5;  // epochs
        spec.warmup_start_factor = 0.0;
        spec.epochs = 3;
        LrSchedule schedule(spec, 10);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{30});  // epochs 0, 1, 2 are below 1
        CHECK_LR(schedule, 9, 0.0);                           // 0 / 2.5
        CHECK_LR(schedule, 10, 0.04);                         // 1 / 2.5 = 0.4
        CHECK_LR(schedule, 29, 0.08);                         // 2 / 2.5 = 0.8
        CHECK_LR(schedule, 30, 0.1);                          // min(3, 2.5) / 2.5 = 1
    }

    void constant_warmup_jumps() {
        RunSpec spec = base_spec();
        spec.warmup = WarmupKind::Constant;
        spec.warmup_length = 1.5;  // epochs: W = 15 steps
        spec.warmup_start_factor = 0.1;
        LrSchedule schedule(spec, 10);
        QCOMPARE(schedule.warmup_steps(), std::int64_t{15});
        CHECK_LR(schedule, 0, 0.01);   // start
        CHECK_LR(schedule, 7, 0.01);   // middle: no ramp
        CHECK_LR(schedule, 10, 0.01);  // nor a step at the epoch boundary
        CHECK_LR(schedule, 14, 0.01);  // end: the last step below W
        CHECK_LR(schedule, 15, 0.1);   // the jump to the full rate
        CHECK_LR(schedule, 16, 0.1);

        spec.warmup_length = 3;
        spec.warmup_unit = WarmupUnit::Steps;
        LrSchedule steps(spec, 10);
        CHECK_LR(steps, 2, 0.01);
        CHECK_LR(steps, 3, 0.1);
    }

    void gradual_warmup_with_cosine() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Cosine;
        spec.min_lr = 0.001;
        spec.warmup = WarmupKind::Gradual;
        spec.warmup_length = 10;
        spec.warmup_unit = WarmupUnit::Steps;
        spec.warmup_start_factor = 0.1;
        LrSchedule schedule(spec, 10);  // total 20 steps
        CHECK_LR(schedule, 0, 0.01);    // cosine 0.1 times 0.1
        // step 5: cosine 0.001 + 0.099 * (1 + cos(pi/4)) / 2, warm-up 0.1 + 0.9 * 5/10 = 0.55
        CHECK_LR(schedule, 5, (0.001 + 0.099 * 0.8535533905932737) * 0.55);
        CHECK_LR(schedule, 10, 0.0505);  // warm-up done: the cosine's midpoint
        CHECK_LR(schedule, 20, 0.001);
    }

    void per_epoch_warmup_with_cosine() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Cosine;
        spec.min_lr = 0.001;
        spec.warmup = WarmupKind::PerEpoch;
        spec.warmup_length = 1;  // epoch
        spec.warmup_start_factor = 0.5;
        LrSchedule schedule(spec, 10);
        CHECK_LR(schedule, 0, 0.05);
        CHECK_LR(schedule, 5, (0.001 + 0.099 * 0.8535533905932737) * 0.5);
        CHECK_LR(schedule, 10, 0.0505);
    }

    void constant_warmup_with_exp() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Exp;
        spec.gamma = 0.5;
        spec.warmup = WarmupKind::Constant;
        spec.warmup_length = 15;
        spec.warmup_unit = WarmupUnit::Steps;
        spec.warmup_start_factor = 0.2;
        LrSchedule schedule(spec, 10);
        CHECK_LR(schedule, 9, 0.02);   // epoch 0: 0.1 * 0.2
        CHECK_LR(schedule, 10, 0.01);  // epoch 1: 0.05 * 0.2
        CHECK_LR(schedule, 14, 0.01);
        CHECK_LR(schedule, 15, 0.05);  // the jump
    }

    void warmup_longer_than_the_run_rejected() {
        RunSpec spec = base_spec();  // 2 epochs of 10 steps: 20 steps
        spec.warmup_length = 20;
        spec.warmup_unit = WarmupUnit::Steps;
        QVERIFY(message_of(spec, 10).empty());  // as long as the run: allowed
        spec.warmup_length = 21;
        const std::string steps = message_of(spec, 10);
        QVERIFY2(contains(steps, "21") && contains(steps, "20"), steps.c_str());

        spec.warmup_length = 2.5;  // epochs: 25 steps
        spec.warmup_unit = WarmupUnit::Epochs;
        for (const WarmupKind kind :
             {WarmupKind::Gradual, WarmupKind::PerEpoch, WarmupKind::Constant}) {
            spec.warmup = kind;
            const std::string epochs = message_of(spec, 10);
            QVERIFY2(contains(epochs, "25") && contains(epochs, "20"), epochs.c_str());
        }
    }

    void warmup_multiplies_the_schedule() {
        RunSpec spec = base_spec();
        spec.schedule = ScheduleKind::Step;
        spec.step_epochs = 1;
        spec.gamma = 0.1;
        spec.warmup_length = 2;  // epochs: 20 steps
        spec.warmup_start_factor = 0.1;
        LrSchedule schedule(spec, 10);
        // step 15: schedule 0.01 (epoch 1), warm-up 0.1 + 0.9 * 15/20 = 0.775
        CHECK_LR(schedule, 15, 0.00775);
        QVERIFY(std::abs(schedule.scheduled_lr(15) - 0.01) < 1e-15);
        QVERIFY(std::abs(schedule.warmup_factor(15) - 0.775) < 1e-15);
    }

    void from_config_with_scaled_base() {
        LrScheduleConfig config = scalelab::optim::schedule_config(base_spec());
        QCOMPARE(config.base_lr, 0.1);
        config.base_lr = 0.4;  // as a linear scaling rule for 4 devices would
        LrSchedule schedule(config, 10);
        CHECK_LR(schedule, 0, 0.4);
    }

    void invalid_inputs_rejected() {
        QCOMPARE(kind_of_error(base_spec(), 0), ErrorKind::InvalidSpec);
        QCOMPARE(kind_of_error(base_spec(), -3), ErrorKind::InvalidSpec);

        RunSpec step = base_spec();
        step.schedule = ScheduleKind::Step;
        step.step_epochs = 0;
        QCOMPARE(kind_of_error(step, 10), ErrorKind::InvalidSpec);

        RunSpec cosine = base_spec();
        cosine.schedule = ScheduleKind::Cosine;
        cosine.epochs = 0;
        QCOMPARE(kind_of_error(cosine, 10), ErrorKind::InvalidSpec);

        RunSpec warmup = base_spec();
        warmup.warmup_length = -1;
        QCOMPARE(kind_of_error(warmup, 10), ErrorKind::InvalidSpec);
        warmup.warmup_length = std::nan("");
        QCOMPARE(kind_of_error(warmup, 10), ErrorKind::InvalidSpec);

        RunSpec per_epoch_in_steps = base_spec();
        per_epoch_in_steps.warmup = WarmupKind::PerEpoch;
        per_epoch_in_steps.warmup_length = 5;
        per_epoch_in_steps.warmup_unit = WarmupUnit::Steps;
        QCOMPARE(kind_of_error(per_epoch_in_steps, 10), ErrorKind::InvalidSpec);

        RunSpec poly = base_spec();
        poly.schedule = ScheduleKind::Poly;
        poly.poly_power = 0;
        QCOMPARE(kind_of_error(poly, 10), ErrorKind::InvalidSpec);
        poly.poly_power = std::nan("");
        QCOMPARE(kind_of_error(poly, 10), ErrorKind::InvalidSpec);
        poly.poly_power = 1;
        poly.epochs = 0;
        QCOMPARE(kind_of_error(poly, 10), ErrorKind::InvalidSpec);

        LrSchedule schedule(base_spec(), 10);
        QVERIFY_THROWS_EXCEPTION(Error, schedule.lr(-1));
    }
};

QTEST_APPLESS_MAIN(TestLrSchedule)
#include "test_lr_schedule.moc"
