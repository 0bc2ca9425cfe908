// A lesson's claims judged on recorded runs: each relation holding and failing with the values
// it measured, per-epoch claims, rising series, and runs that cannot be judged.

#include <QtTest>

#include <vector>

#include "lesson_claim.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_fixtures.h"

using namespace scalelab;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

// A finished run with these per-epoch training losses (and accuracy 1 - loss / 4).
RunRecord run_with_losses(const QString& name, const std::vector<double>& losses,
                          double images_per_s = 1000) {
    RunRecord run =
        fixture_run(fixture_spec(1), name, images_per_s, std::vector<double>(losses.size(), 0.8));
    for (std::size_t i = 0; i < losses.size(); ++i) {
        run.epochs[i].train_loss = losses[i];
        run.epochs[i].train_accuracy = 1.0 - losses[i] / 4;
    }
    return run;
}

// Each run a lesson run of its own, without repeats.
LessonRunIds each(const std::vector<int>& ids) {
    LessonRunIds lesson_runs;
    for (const int id : ids)
        lesson_runs.push_back({id});
    return lesson_runs;
}

LessonClaim claim(ClaimMetric metric, ClaimRelation relation, std::vector<int> runs, double value,
                  int from_epoch = 1) {
    return LessonClaim{QStringLiteral("a claim"), metric, relation,
                       std::move(runs),           value,  from_epoch};
}

}  // namespace

class TestLessonClaim : public QObject {
    Q_OBJECT

  private slots:
    void withinHoldsAndFailsWithTheGap() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(run_with_losses("linear", {1.0, 0.25})),
                                   runs.add(run_with_losses("reference", {0.8, 0.23}))};
        const LessonClaim close =
            claim(ClaimMetric::FinalTrainLoss, ClaimRelation::Within, {0, 1}, 0.1);
        ClaimVerdict verdict = evaluate_claim(close, runs, each(ids));
        QCOMPARE(verdict.outcome, ClaimOutcome::Held);
        QCOMPARE(verdict.text, QStringLiteral("0.250 against 0.230: +8.7% (at most ±10%)"));
        const LessonClaim closer =
            claim(ClaimMetric::FinalTrainLoss, ClaimRelation::Within, {0, 1}, 0.05);
        verdict = evaluate_claim(closer, runs, each(ids));
        QCOMPARE(verdict.outcome, ClaimOutcome::Failed);
        QCOMPARE(verdict.text, QStringLiteral("0.250 against 0.230: +8.7% (at most ±5%)"));
    }

    void perEpochClaimsHoldAtEveryEpochFromTheFirstCompared() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(run_with_losses("linear", {1.0, 0.5, 0.3})),
                                   runs.add(run_with_losses("reference", {0.7, 0.48, 0.29}))};
        // Epoch 1 (warm-up) is 43% off; from epoch 2 on within 5%.
        LessonClaim from_two =
            claim(ClaimMetric::EpochTrainLoss, ClaimRelation::Within, {0, 1}, 0.05, 2);
        ClaimVerdict verdict = evaluate_claim(from_two, runs, each(ids));
        QCOMPARE(verdict.outcome, ClaimOutcome::Held);
        QCOMPARE(verdict.text, QStringLiteral("at each of epochs 2-3; at epoch 3: 0.300 against "
                                              "0.290: +3.4% (at most ±5%)"));
        from_two.from_epoch = 1;
        verdict = evaluate_claim(from_two, runs, each(ids));
        QCOMPARE(verdict.outcome, ClaimOutcome::Failed);
        QCOMPARE(verdict.text,
                 QStringLiteral("epoch 1: 1.000 against 0.700: +42.9% (at most ±5%)"));
        from_two.from_epoch = 9;
        QCOMPARE(evaluate_claim(from_two, runs, each(ids)).text,
                 QStringLiteral("no epoch from 9 on to compare"));
        QCOMPARE(evaluate_claim(from_two, runs, each(ids)).outcome, ClaimOutcome::Failed);
    }

    void betterThanKnowsWhichWayIsBetter() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(run_with_losses("scaled", {0.5, 0.24})),
                                   runs.add(run_with_losses("same lr", {0.9, 0.37}))};
        // Lower loss is better.
        LessonClaim lower =
            claim(ClaimMetric::FinalTrainLoss, ClaimRelation::BetterThan, {0, 1}, 0.1);
        QCOMPARE(evaluate_claim(lower, runs, each(ids)).outcome, ClaimOutcome::Held);
        QCOMPARE(evaluate_claim(lower, runs, each(ids)).text,
                 QStringLiteral("0.240 against 0.370: better by 0.130 (at least 0.100)"));
        lower.runs = {1, 0};
        QCOMPARE(evaluate_claim(lower, runs, each(ids)).outcome, ClaimOutcome::Failed);
        QCOMPARE(evaluate_claim(lower, runs, each(ids)).text,
                 QStringLiteral("0.370 against 0.240: worse by 0.130 (at least 0.100)"));
        // Higher accuracy is better: 1 - 0.24 / 4 = 0.94 against 0.9075.
        const LessonClaim higher =
            claim(ClaimMetric::FinalTrainAccuracy, ClaimRelation::BetterThan, {0, 1}, 0.03);
        QCOMPARE(evaluate_claim(higher, runs, each(ids)).outcome, ClaimOutcome::Held);
        QCOMPARE(evaluate_claim(claim(ClaimMetric::FinalTrainAccuracy, ClaimRelation::BetterThan,
                                      {0, 1}, 0.04),
                                runs, each(ids))
                     .outcome,
                 ClaimOutcome::Failed);
    }

    void risesOverAllowsTheToleranceAndNeedsARise() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(run_with_losses("b8", {0.5}, 50000)),
                                   runs.add(run_with_losses("b16", {0.5}, 90000)),
                                   runs.add(run_with_losses("b32", {0.5}, 85000)),
                                   runs.add(run_with_losses("b64", {0.5}, 120000))};
        LessonClaim rises =
            claim(ClaimMetric::ImagesPerSecond, ClaimRelation::RisesOver, {0, 1, 2, 3}, 0.1);
        ClaimVerdict verdict = evaluate_claim(rises, runs, each(ids));
        QCOMPARE(verdict.outcome, ClaimOutcome::Held);  // 90k -> 85k is a 5.6% dip
        QCOMPARE(verdict.text, QStringLiteral("50,000 → 90,000 → 85,000 → 120,000"));
        rises.value = 0.05;
        verdict = evaluate_claim(rises, runs, each(ids));
        QCOMPARE(verdict.outcome, ClaimOutcome::Failed);
        QCOMPARE(verdict.text, QStringLiteral("50,000 → 90,000 → 85,000 → 120,000; falls −5.6% "
                                              "to “b32” (at most 5%)"));
        // Level from first to last is no rise.
        rises.runs = {1, 2};
        rises.value = 0.1;
        QCOMPARE(evaluate_claim(rises, runs, each(ids)).outcome, ClaimOutcome::Failed);
    }

    void risesOverAnEpochMetricHoldsAtEveryEpoch() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(run_with_losses("b16", {0.50, 0.30})),
                                   runs.add(run_with_losses("b64", {0.55, 0.29})),
                                   runs.add(run_with_losses("b2048", {0.90, 0.40}))};
        LessonClaim rises =
            claim(ClaimMetric::EpochTrainLoss, ClaimRelation::RisesOver, {0, 1, 2}, 0.05);
        QCOMPARE(evaluate_claim(rises, runs, each(ids)).outcome, ClaimOutcome::Held);
        QCOMPARE(evaluate_claim(rises, runs, each(ids)).text,
                 QStringLiteral("at each of epochs 1-2; at epoch 2: 0.300 → 0.290 → 0.400"));
        rises.value = 0.01;  // 0.30 -> 0.29 at epoch 2 is a 3.3% fall
        QCOMPARE(
            evaluate_claim(rises, runs, each(ids)).text,
            QStringLiteral("epoch 2: 0.300 → 0.290 → 0.400; falls −3.3% to “b64” (at most 1%)"));
    }

    void atLeastAndAtMost() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(run_with_losses("one", {0.5}, 1000))};
        QCOMPARE(
            evaluate_claim(claim(ClaimMetric::ImagesPerSecond, ClaimRelation::AtLeast, {0}, 900),
                           runs, each(ids))
                .outcome,
            ClaimOutcome::Held);
        QCOMPARE(
            evaluate_claim(claim(ClaimMetric::ImagesPerSecond, ClaimRelation::AtMost, {0}, 900),
                           runs, each(ids))
                .text,
            QStringLiteral("1,000 (at most 900)"));
    }

    void scalingEfficiencyComesFromTheOneDeviceTwin() {
        RunController controller;
        RunCollection runs(controller);
        const std::vector<int> ids{runs.add(fixture_run(fixture_spec(1), "1", 1000, {0.8})),
                                   runs.add(fixture_run(fixture_spec(2), "2", 1700, {0.8}))};
        const LessonClaim efficient =
            claim(ClaimMetric::ScalingEfficiency, ClaimRelation::AtLeast, {1}, 0.8);
        QCOMPARE(evaluate_claim(efficient, runs, each(ids)).text,
                 QStringLiteral("85% (at least 80%)"));
        QCOMPARE(evaluate_claim(efficient, runs, each(ids)).outcome, ClaimOutcome::Held);
        // A disturbed baseline is named: the figure is not the engine's alone.
        RunRecord busy = fixture_run(fixture_spec(1), "busy 1", 1000, {0.8});
        busy.epochs.back().other_programs_share = 0.5;
        RunController other_controller;
        RunCollection disturbed(other_controller);
        const std::vector<int> disturbed_ids{
            disturbed.add(busy), disturbed.add(fixture_run(fixture_spec(2), "2", 1700, {0.8}))};
        QCOMPARE(evaluate_claim(efficient, disturbed, each(disturbed_ids)).text,
                 QStringLiteral("85% (at least 80%); other programs used 50% of the cores during "
                                "“busy 1”: its images/s are not the engine's alone"));
        // The 1-device run has no efficiency.
        const LessonClaim of_one =
            claim(ClaimMetric::ScalingEfficiency, ClaimRelation::AtLeast, {0}, 0.8);
        QCOMPARE(evaluate_claim(of_one, runs, each(ids)).outcome, ClaimOutcome::Failed);
        QCOMPARE(evaluate_claim(of_one, runs, each(ids)).text,
                 QStringLiteral("“1” has no scaling_efficiency"));
    }

    void theNoiseScaleIsReadAtEachEpochsEnd() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord run = run_with_losses("noisy", {1.0, 0.5, 0.4});
        // Unknown (NaN) at first, then 20 by the end of epoch 1, 90 and 160 later.
        const std::vector<std::pair<int, double>> points{
            {1, std::numeric_limits<double>::quiet_NaN()}, {1, 20}, {2, 90}, {3, 160}};
        for (const auto& [epoch, value] : points)
            run.curve(Metric::NoiseScale).push_back(MetricPoint{0, epoch, 0, 0, value});
        const std::vector<int> ids{runs.add(run)};
        LessonClaim early = claim(ClaimMetric::EpochNoiseScale, ClaimRelation::AtMost, {0}, 80);
        QCOMPARE(evaluate_claim(early, runs, each(ids)).outcome,
                 ClaimOutcome::Failed);  // 90 at epoch 2
        early.to_epoch = 1;
        QCOMPARE(evaluate_claim(early, runs, each(ids)).outcome, ClaimOutcome::Held);
        QCOMPARE(evaluate_claim(early, runs, each(ids)).text,
                 QStringLiteral("at epoch 1: 20.0 (at most 80.0)"));
        const LessonClaim late =
            claim(ClaimMetric::FinalNoiseScale, ClaimRelation::AtLeast, {0}, 150);
        QCOMPARE(evaluate_claim(late, runs, each(ids)).text,
                 QStringLiteral("160.0 (at least 150.0)"));
        QCOMPARE(evaluate_claim(late, runs, each(ids)).outcome, ClaimOutcome::Held);
    }

    void groupsCompareTheirMeansOutsideTheSeedNoise() {
        RunController controller;
        RunCollection runs(controller);
        // Final training losses over three seeds each: 0.19-0.21 against 0.29-0.31.
        const LessonRunIds ids{{runs.add(run_with_losses("small (seed 0)", {0.5, 0.20})),
                                runs.add(run_with_losses("small (seed 1)", {0.5, 0.21})),
                                runs.add(run_with_losses("small (seed 2)", {0.5, 0.19}))},
                               {runs.add(run_with_losses("large (seed 0)", {0.6, 0.30})),
                                runs.add(run_with_losses("large (seed 1)", {0.6, 0.31})),
                                runs.add(run_with_losses("large (seed 2)", {0.6, 0.29}))}};
        const LessonClaim better =
            claim(ClaimMetric::FinalTrainLoss, ClaimRelation::BetterThan, {0, 1}, 0.05);
        ClaimVerdict verdict = evaluate_claim(better, runs, ids);
        QCOMPARE(verdict.outcome, ClaimOutcome::Held);
        QCOMPARE(verdict.text, QStringLiteral("0.200 ± 0.010 against 0.300 ± 0.010: better by "
                                              "0.100 (at least 0.050)"));
        // Per epoch: 0.5 against 0.6 at epoch 1 with no spread at all is no noise either.
        const LessonClaim every =
            claim(ClaimMetric::EpochTrainLoss, ClaimRelation::BetterThan, {0, 1}, 0.05);
        QCOMPARE(evaluate_claim(every, runs, ids).outcome, ClaimOutcome::Held);
        // The means still differ by as much the other way round, which fails as before.
        QCOMPARE(evaluate_claim(
                     claim(ClaimMetric::FinalTrainLoss, ClaimRelation::BetterThan, {1, 0}, 0.05),
                     runs, ids)
                     .outcome,
                 ClaimOutcome::Failed);
    }

    void aDifferenceWithinTheSeedNoiseIsNotShown() {
        RunController controller;
        RunCollection runs(controller);
        // Means 0.250 and 0.270, each seed ±0.05: the order of the means is chance.
        const LessonRunIds ids{{runs.add(run_with_losses("a (seed 0)", {0.5, 0.20})),
                                runs.add(run_with_losses("a (seed 1)", {0.5, 0.30})),
                                runs.add(run_with_losses("a (seed 2)", {0.5, 0.25}))},
                               {runs.add(run_with_losses("b (seed 0)", {0.6, 0.22})),
                                runs.add(run_with_losses("b (seed 1)", {0.6, 0.32})),
                                runs.add(run_with_losses("b (seed 2)", {0.6, 0.27}))}};
        const LessonClaim better =
            claim(ClaimMetric::FinalTrainLoss, ClaimRelation::BetterThan, {0, 1}, 0.0);
        const ClaimVerdict verdict = evaluate_claim(better, runs, ids);
        QCOMPARE(verdict.outcome, ClaimOutcome::WithinNoise);
        QVERIFY2(verdict.text.startsWith(QStringLiteral(
                     "not shown by these runs: within seed noise: final_train_loss 0.250 ± "
                     "0.050 against 0.270 ± 0.050 (Welch's t-test, p = ")),
                 qPrintable(verdict.text));
        // Per epoch it is shown at epoch 1 (no spread) but not at epoch 2, which says so.
        const ClaimVerdict every = evaluate_claim(
            claim(ClaimMetric::EpochTrainLoss, ClaimRelation::BetterThan, {0, 1}, 0.0), runs, ids);
        QCOMPARE(every.outcome, ClaimOutcome::WithinNoise);
        QVERIFY2(every.text.startsWith(QStringLiteral("epoch 2: not shown by these runs: ")),
                 qPrintable(every.text));
        // A rise from the first group to the last is a difference too.
        const LessonClaim rises =
            claim(ClaimMetric::FinalTrainLoss, ClaimRelation::RisesOver, {0, 1}, 0.0);
        QCOMPARE(evaluate_claim(rises, runs, ids).outcome, ClaimOutcome::WithinNoise);
        // A within claim says the runs are alike: the noise does not undo it.
        QCOMPARE(
            evaluate_claim(claim(ClaimMetric::FinalTrainLoss, ClaimRelation::Within, {0, 1}, 0.1),
                           runs, ids)
                .outcome,
            ClaimOutcome::Held);
        // One seed each: no noise to measure, the values are compared as they are.
        const LessonRunIds first_seeds{{ids[0][0]}, {ids[1][0]}};
        QCOMPARE(evaluate_claim(better, runs, first_seeds).outcome, ClaimOutcome::Held);
    }

    void aGroupWaitsForEveryMemberAndNeedsThemAll() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord running = run_with_losses("a (seed 1)", {0.5});
        running.state = RunState::Running;
        RunRecord cancelled = run_with_losses("b (seed 1)", {0.5});
        cancelled.state = RunState::Cancelled;
        const LessonRunIds ids{
            {runs.add(run_with_losses("a (seed 0)", {0.4})), runs.add(running)},
            {runs.add(run_with_losses("b (seed 0)", {0.4})), runs.add(cancelled)},
            {runs.add(run_with_losses("c (seed 0)", {0.4}))}};
        const auto verdict = [&](std::vector<int> named) {
            return evaluate_claim(
                claim(ClaimMetric::FinalTrainLoss, ClaimRelation::Within, std::move(named), 0.5),
                runs, ids);
        };
        QCOMPARE(verdict({0, 2}).outcome, ClaimOutcome::Pending);
        QCOMPARE(verdict({1, 2}).outcome, ClaimOutcome::Failed);
        QCOMPARE(verdict({1, 2}).text, QStringLiteral("“b (seed 1)” did not finish (cancelled)"));
    }

    void runsThatAreNotOverOrDidNotFinishCannotHold() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord running = run_with_losses("running", {0.5});
        running.state = RunState::Running;
        RunRecord cancelled = run_with_losses("cancelled", {0.5});
        cancelled.state = RunState::Cancelled;
        RunRecord diverged = run_with_losses("diverged", {0.5});
        diverged.state = RunState::Diverged;
        diverged.epochs.back().train_loss = std::numeric_limits<double>::quiet_NaN();
        const std::vector<int> ids{runs.add(run_with_losses("done", {0.4})), runs.add(running),
                                   runs.add(cancelled), runs.add(diverged)};
        const auto outcome = [&](std::vector<int> named) {
            return evaluate_claim(
                claim(ClaimMetric::FinalTrainLoss, ClaimRelation::Within, std::move(named), 0.5),
                runs, each(ids));
        };
        QCOMPARE(outcome({0, 1}).outcome, ClaimOutcome::Pending);
        QCOMPARE(outcome({0, 2}).outcome, ClaimOutcome::Failed);
        QCOMPARE(outcome({0, 2}).text, QStringLiteral("“cancelled” did not finish (cancelled)"));
        QCOMPARE(outcome({3, 0}).text,
                 QStringLiteral("“diverged” has no final_train_loss: it diverged"));
        // A run not started yet (no ids) is waited for.
        QCOMPARE(evaluate_claim(claim(ClaimMetric::FinalTrainLoss, ClaimRelation::AtMost, {0}, 1),
                                runs, LessonRunIds(1))
                     .outcome,
                 ClaimOutcome::Pending);
    }
};

QTEST_MAIN(TestLessonClaim)
#include "test_lesson_claim.moc"
