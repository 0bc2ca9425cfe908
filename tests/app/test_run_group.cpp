#include <QtTest>

#include <cmath>
#include <numbers>

#include "run_fixtures.h"
#include "run_group.h"

using scalelab::GroupSummary;
using scalelab::RunRecord;
using scalelab::RunState;
using scalelab::Spread;
using scalelab::spread_of;
using scalelab::WelchTest;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

// 1 device × 128 images at 1280 images/s: 0.1 s a step, 1 s an epoch of 10 steps.
RunRecord member(const QString& name, const std::vector<double>& val_accuracy, RunState state,
                 std::uint64_t seed) {
    RunRecord run = fixture_run(fixture_spec(1), name, 1280, val_accuracy, state);
    run.spec.seed = seed;
    run.group = QStringLiteral("g");
    return run;
}

GroupSummary summary_of(const std::vector<RunRecord>& runs) {
    std::vector<const RunRecord*> members;
    for (const RunRecord& run : runs)
        members.push_back(&run);
    return scalelab::group_summary(QStringLiteral("g"), members);
}

Spread spread(const std::vector<double>& values) {
    return *spread_of(values);
}

}  // namespace

class TestRunGroup : public QObject {
    Q_OBJECT

  private slots:
    void aSummaryCountsEveryMemberHoweverItEnded() {
        const std::vector<RunRecord> runs = {
            member("a", {0.86, 0.91}, RunState::ReachedTarget, 1),
            member("b", {0.84, 0.88}, RunState::Finished, 2),
            member("c", {0.80}, RunState::Diverged, 3),
            member("d", {0.70}, RunState::Running, 4),
            member("e", {0.60}, RunState::Cancelled, 5),
        };
        const GroupSummary summary = summary_of(runs);
        QCOMPARE(summary.run_ids.size(), std::size_t(5));
        QCOMPARE(summary.finished, 2);
        QCOMPARE(summary.diverged, 1);
        QCOMPARE(summary.active, 1);
        QCOMPARE(summary.stopped, 1);
        QCOMPARE(scalelab::group_ended_text(summary),
                 QStringLiteral("5 runs: 2 finished, 1 queued or running, 1 diverged, 1 stopped"));
        QCOMPARE(summary.best_val_accuracy->count, 5);
        QVERIFY(std::abs(summary.best_val_accuracy->mean - (0.91 + 0.88 + 0.80 + 0.70 + 0.60) / 5) <
                1e-12);
        QCOMPARE(summary.best_val_accuracy->max, 0.91);
        QCOMPARE(summary.images_per_s->mean, 1280.0);
    }

    void timesToTargetAreToOneTargetForEveryMember() {
        // "a" reached 0.90 (and 0.85 at epoch 1), "b" only 0.85 at epoch 2: both are timed to
        // 0.85, never 0.90 against 0.85.
        const std::vector<RunRecord> runs = {member("a", {0.86, 0.91}, RunState::Finished, 1),
                                             member("b", {0.84, 0.88}, RunState::Finished, 2),
                                             member("c", {0.50}, RunState::Finished, 3)};
        const GroupSummary summary = summary_of(runs);
        QCOMPARE(summary.target, 0.85);
        QCOMPARE(summary.time_to_target_s->count, 2);
        QVERIFY(std::abs(summary.time_to_target_s->mean - 1.5) < 1e-9);
        QVERIFY(std::abs(summary.time_to_target_s->stddev - std::sqrt(0.5)) < 1e-9);
        QCOMPARE(summary.steps_to_target->mean, 15.0);
    }

    void aGroupWhereNoneReachedATargetHasNoTime() {
        const GroupSummary summary = summary_of({member("a", {0.5}, RunState::Finished, 1)});
        QCOMPARE(summary.target, 0.0);
        QVERIFY(!summary.time_to_target_s);
        QVERIFY(!summary.steps_to_target);
    }

    // Two groups of 2 with equal spreads: 2 degrees of freedom, where Student's t has the closed
    // form P(|T| > t) = 1 - t / sqrt(2 + t^2).
    void welchsTestMatchesTheClosedFormAtTwoDegreesOfFreedom() {
        const std::optional<WelchTest> test = scalelab::welch_test(spread({1, 3}), spread({2, 4}));
        QVERIFY(test);
        QVERIFY(std::abs(test->t + 1 / std::sqrt(2.0)) < 1e-12);
        QVERIFY(std::abs(test->degrees_of_freedom - 2) < 1e-12);
        const double t = 1 / std::sqrt(2.0);
        QVERIFY(std::abs(test->p - (1 - t / std::sqrt(2 + t * t))) < 1e-9);
    }

    // One group without spread leaves the other's n - 1 = 1 degree of freedom: the Cauchy
    // distribution, P(|T| > t) = 1 - 2 atan(t) / pi.
    void welchsTestMatchesTheClosedFormAtOneDegreeOfFreedom() {
        const std::optional<WelchTest> test =
            scalelab::welch_test(spread({1, 3}), spread({5, 5, 5}));
        QVERIFY(test);
        QVERIFY(std::abs(test->t + 3) < 1e-12);
        QVERIFY(std::abs(test->degrees_of_freedom - 1) < 1e-12);
        QVERIFY(std::abs(test->p - (1 - 2 * std::atan(3.0) / std::numbers::pi)) < 1e-9);
    }

    void welchsTestNeedsTwoValuesAndSomeSpread() {
        QVERIFY(!scalelab::welch_test(spread({0.9}), spread({0.8, 0.81})));
        QVERIFY(!scalelab::welch_test(spread({0.9, 0.9}), spread({0.8, 0.8})));
    }

    void theNoteSaysWithinSeedNoiseOnlyWhenTheMeansDoNotDiffer() {
        const Spread mine = spread({0.895, 0.897, 0.899, 0.894, 0.900});
        const Spread close = spread({0.899, 0.901, 0.897, 0.900, 0.898});
        const QString note = scalelab::noise_note(QStringLiteral("best val acc"), mine, close, 3);
        QVERIFY2(note.startsWith(QStringLiteral("within seed noise: best val acc 0.897 ± 0.003 "
                                                "against 0.899 ± 0.002 (Welch's t-test, p = 0.")),
                 qPrintable(note));
        const Spread far = spread({0.80, 0.81, 0.79});
        QCOMPARE(scalelab::noise_note(QStringLiteral("best val acc"), mine, far, 3), QString());
    }

    void groupsAreComparedWithTheBaselinesGroupElseTheBestOther() {
        std::vector<GroupSummary> groups(3);
        const double means[] = {0.85, 0.90, 0.88};
        for (std::size_t i = 0; i < groups.size(); ++i) {
            groups[i].group = QStringLiteral("g%1").arg(i);
            groups[i].best_val_accuracy = Spread{.count = 3, .mean = means[i]};
        }
        QCOMPARE(scalelab::reference_group(groups[0], groups, {})->group, QStringLiteral("g1"));
        // The best group is compared with the next best.
        QCOMPARE(scalelab::reference_group(groups[1], groups, {})->group, QStringLiteral("g2"));
        QCOMPARE(scalelab::reference_group(groups[1], groups, QStringLiteral("g0"))->group,
                 QStringLiteral("g0"));
        QCOMPARE(scalelab::reference_group(groups[0], groups, QStringLiteral("g0"))->group,
                 QStringLiteral("g1"));
        QVERIFY(!scalelab::reference_group(groups[0], {groups[0]}, {}));
    }

    void aGroupIsNamedByWhatItsRunsNamesShareAndItsSeeds() {
        const std::vector<RunRecord> runs = {
            member("lars wide (seed 1)", {0.8}, RunState::Finished, 1),
            member("lars wide (seed 2)", {0.8}, RunState::Finished, 2),
            member("lars wide (seed 3)", {0.8}, RunState::Finished, 3)};
        QCOMPARE(scalelab::group_label({&runs[0], &runs[1], &runs[2]}),
                 QStringLiteral("lars wide · seeds 1–3"));
        const RunRecord run11 = member("run 11", {0.8}, RunState::Finished, 7);
        const RunRecord run12 = member("run 12", {0.8}, RunState::Finished, 9);
        QCOMPARE(scalelab::group_label({&run11, &run12}), QStringLiteral("run · 2 seeds"));
        const RunRecord other = member("other", {0.8}, RunState::Finished, 8);
        QCOMPARE(scalelab::group_label({&run11, &other}), QStringLiteral("run 11 · seeds 7–8"));
    }
};

QTEST_GUILESS_MAIN(TestRunGroup)
#include "test_run_group.moc"
