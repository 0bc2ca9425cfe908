// The assessment's verdict on prepared runs: passed, failed by time, failed by accuracy, failed
// by the run's end, and pending while a run can still pass.

#include <QtTest>

#include <utility>
#include <vector>

#include "assessment.h"

using scalelab::assess;
using scalelab::Assessment;
using scalelab::AssessmentOutcome;
using scalelab::AssessmentVerdict;
using scalelab::Metric;
using scalelab::RunRecord;
using scalelab::RunState;

namespace {

// The course's criterion with a laptop budget: 0.85 in 2 epochs in a row within 120 s.
Assessment laptop_assessment() {
    Assessment a;
    a.target = 0.85;
    a.consecutive_epochs = 2;
    a.time_budget_s = 120;
    return a;
}

// A run with one validation accuracy per epoch, each at the training time given (seconds).
RunRecord run_with(const std::vector<std::pair<double, double>>& accuracy_at_seconds,
                   RunState state) {
    RunRecord run;
    run.state = state;
    run.started = state != RunState::Queued;
    int epoch = 0;
    for (const auto& [accuracy, seconds] : accuracy_at_seconds) {
        ++epoch;
        run.curve(Metric::ValAccuracy)
            .push_back({epoch * 100, epoch, epoch * 6400.0, seconds, accuracy});
        run.train_seconds = seconds;
        run.epoch = epoch;
    }
    return run;
}

}  // namespace

class TestAssessment : public QObject {
    Q_OBJECT

  private slots:
    void passesWhenTheTargetHoldsTwoEpochsWithinTheBudget() {
        const RunRecord run =
            run_with({{0.80, 30}, {0.86, 60}, {0.87, 90}, {0.84, 115}}, RunState::Finished);
        const AssessmentVerdict verdict = assess(laptop_assessment(), run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Passed);
        QVERIFY2(verdict.text.startsWith("passed: 0.860, 0.870 at epochs 2-3"),
                 qPrintable(verdict.text));
        QVERIFY2(verdict.text.contains("after 90 s of the 120 s budget"), qPrintable(verdict.text));
    }

    void passesWhileStillRunning() {
        const RunRecord run = run_with({{0.86, 40}, {0.88, 80}}, RunState::Running);
        QCOMPARE(assess(laptop_assessment(), run).outcome, AssessmentOutcome::Passed);
    }

    void oneEpochAboveTheTargetIsNotEnough() {
        const RunRecord run = run_with({{0.86, 30}, {0.84, 60}, {0.86, 90}}, RunState::Finished);
        const AssessmentVerdict verdict = assess(laptop_assessment(), run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Failed);
        QVERIFY2(verdict.text.contains("best 0.860 in 90 s"), qPrintable(verdict.text));
        QVERIFY2(verdict.text.contains("below 0.850 for 2 epochs in a row"),
                 qPrintable(verdict.text));
    }

    void failsWhenTheStreakEndsAfterTheBudget() {
        const RunRecord run = run_with({{0.80, 60}, {0.86, 100}, {0.87, 130}}, RunState::Finished);
        const AssessmentVerdict verdict = assess(laptop_assessment(), run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Failed);
        QVERIFY2(verdict.text.contains("0.860, 0.870 at epochs 2-3 came after 130 s"),
                 qPrintable(verdict.text));
        QVERIFY2(verdict.text.contains("over the 120 s budget"), qPrintable(verdict.text));
    }

    void failsByAccuracyWithTheBestWithinTheBudget() {
        // 0.95 comes too late to count as the best within the budget.
        const RunRecord run = run_with({{0.70, 40}, {0.84, 80}, {0.95, 160}}, RunState::Finished);
        const AssessmentVerdict verdict = assess(laptop_assessment(), run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Failed);
        QVERIFY2(verdict.text.contains("best 0.840 in 120 s"), qPrintable(verdict.text));
    }

    void pendingWhileRunningWithinTheBudget() {
        const RunRecord run = run_with({{0.80, 30}, {0.86, 60}}, RunState::Running);
        const AssessmentVerdict verdict = assess(laptop_assessment(), run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Pending);
        QVERIFY2(verdict.text.contains("best 0.860 so far, after 60 s of the 120 s budget"),
                 qPrintable(verdict.text));
    }

    void pendingBeforeTheFirstEvaluation() {
        const AssessmentVerdict verdict =
            assess(laptop_assessment(), run_with({}, RunState::Queued));
        QCOMPARE(verdict.outcome, AssessmentOutcome::Pending);
        QVERIFY2(verdict.text.contains("no evaluation"), qPrintable(verdict.text));
    }

    void failsWhileRunningOnceOverTheBudget() {
        // No streak by 130 s: a streak completed later would be over the budget too.
        const RunRecord run = run_with({{0.80, 65}, {0.86, 130}}, RunState::Running);
        QCOMPARE(assess(laptop_assessment(), run).outcome, AssessmentOutcome::Failed);
    }

    void failsWhenTheRunDiverged() {
        const RunRecord run = run_with({{0.40, 30}}, RunState::Diverged);
        const AssessmentVerdict verdict = assess(laptop_assessment(), run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Failed);
        QVERIFY2(verdict.text.contains("the run diverged after 30 s"), qPrintable(verdict.text));
        QVERIFY2(verdict.text.contains("best 0.400"), qPrintable(verdict.text));
    }

    void oneEpochCriterionNamesOneEpoch() {
        Assessment one = laptop_assessment();
        one.consecutive_epochs = 1;
        const RunRecord run = run_with({{0.80, 30}, {0.85, 60}}, RunState::ReachedTarget);
        const AssessmentVerdict verdict = assess(one, run);
        QCOMPARE(verdict.outcome, AssessmentOutcome::Passed);
        QVERIFY2(verdict.text.startsWith("passed: 0.850 at epoch 2,"), qPrintable(verdict.text));
    }
};

QTEST_APPLESS_MAIN(TestAssessment)
#include "test_assessment.moc"
