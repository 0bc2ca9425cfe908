// The time breakdown: each phase's mean seconds per step on each device over a window of steps.

#include <QtTest>

#include <vector>

#include "time_breakdown.h"

using scalelab::all_step_phases;
using scalelab::DeviceStepTimes;
using scalelab::mean_time_breakdown;
using scalelab::phase_seconds;
using scalelab::step_phase_name;
using scalelab::StepPhase;
using scalelab::StepTiming;
using scalelab::TimeBreakdown;

namespace {

DeviceStepTimes times(double data, double forward, double backward, double exposed, double wait,
                      double optimizer) {
    return DeviceStepTimes{data, forward, backward, exposed, wait, optimizer, {}};
}

// Three steps of two devices, taking 1, 2 and 4 seconds.
std::vector<StepTiming> three_steps() {
    return {
        StepTiming{1,
                   0.0,
                   1.0,
                   {times(0.1, 0.2, 0.3, 0.05, 0.1, 0.2), times(0.2, 0.2, 0.3, 0.0, 0.05, 0.2)}},
        StepTiming{2,
                   1.0,
                   2.0,
                   {times(0.3, 0.4, 0.5, 0.15, 0.3, 0.2), times(0.0, 0.4, 0.5, 0.1, 0.25, 0.2)}},
        StepTiming{3,
                   3.0,
                   4.0,
                   {times(0.8, 0.9, 1.1, 0.4, 0.5, 0.3), times(0.6, 0.9, 1.1, 0.5, 0.6, 0.3)}},
    };
}

void compare_phases(const std::array<double, scalelab::step_phase_count>& actual,
                    const std::array<double, scalelab::step_phase_count>& expected) {
    for (std::size_t p = 0; p < actual.size(); ++p)
        QVERIFY2(qAbs(actual[p] - expected[p]) < 1e-12,
                 qPrintable(QStringLiteral("%1: %2, expected %3")
                                .arg(QString::fromUtf8(step_phase_name(all_step_phases[p])))
                                .arg(actual[p])
                                .arg(expected[p])));
}

}  // namespace

class TestTimeBreakdown : public QObject {
    Q_OBJECT

  private slots:
    void phasesAreNamedAndReadInStepOrder() {
        const DeviceStepTimes t = times(1, 2, 3, 4, 5, 6);
        QCOMPARE(all_step_phases.size(), std::size_t(6));
        for (std::size_t p = 0; p < all_step_phases.size(); ++p)
            QCOMPARE(phase_seconds(t, all_step_phases[p]), double(p + 1));
        QCOMPARE(step_phase_name(StepPhase::Data), std::string_view("data"));
        QCOMPARE(step_phase_name(StepPhase::ExposedComm),
                 std::string_view("exposed communication"));
        QCOMPARE(step_phase_name(StepPhase::Wait), std::string_view("waiting"));
        QCOMPARE(step_phase_name(StepPhase::Optimizer), std::string_view("optimizer"));
    }

    void averagesEachPhaseOnEachDevice() {
        const TimeBreakdown b = mean_time_breakdown(three_steps(), 1, 2);
        QCOMPARE(b.steps, 2);
        QCOMPARE(b.first_step, std::int64_t(1));
        QCOMPARE(b.last_step, std::int64_t(2));
        QCOMPARE(b.step_seconds, 1.5);
        QCOMPARE(b.devices.size(), std::size_t(2));
        compare_phases(b.devices[0], {0.2, 0.3, 0.4, 0.1, 0.2, 0.2});
        compare_phases(b.devices[1], {0.1, 0.3, 0.4, 0.05, 0.15, 0.2});
    }

    void aWindowPastTheTimingsIsClippedToThem() {
        const TimeBreakdown late = mean_time_breakdown(three_steps(), 2, 100);
        QCOMPARE(late.steps, 2);
        QCOMPARE(late.first_step, std::int64_t(2));
        QCOMPARE(late.last_step, std::int64_t(3));
        QCOMPARE(late.step_seconds, 3.0);
        compare_phases(late.devices[0], {0.55, 0.65, 0.8, 0.275, 0.4, 0.25});

        const TimeBreakdown all = mean_time_breakdown(three_steps(), -5, 3);
        QCOMPARE(all.steps, 3);
        QCOMPARE(all.first_step, std::int64_t(1));
        QCOMPARE(all.step_seconds, 7.0 / 3);
        compare_phases(all.devices[1], {0.8 / 3, 1.5 / 3, 1.9 / 3, 0.6 / 3, 0.9 / 3, 0.7 / 3});
    }

    void anEmptyWindowHasNoSteps() {
        for (const auto& [first, last] : {std::pair<std::int64_t, std::int64_t>{4, 9}, {3, 2}}) {
            const TimeBreakdown b = mean_time_breakdown(three_steps(), first, last);
            QCOMPARE(b.steps, 0);
            QCOMPARE(b.step_seconds, 0.0);
            QVERIFY(b.devices.empty());
        }
        QCOMPARE(mean_time_breakdown({}, 1, 10).steps, 0);
    }
};

QTEST_GUILESS_MAIN(TestTimeBreakdown)
#include "test_time_breakdown.moc"
