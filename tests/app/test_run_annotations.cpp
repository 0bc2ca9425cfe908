#include <QtTest>

#include <cmath>
#include <limits>

#include "run_annotations.h"
#include "run_fixtures.h"

using scalelab::Metric;
using scalelab::MetricPoint;
using scalelab::RunAnnotation;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

// The annotation of `run` whose text starts with `start`; null when none does.
std::optional<RunAnnotation> annotation(const RunRecord& run, const QString& start) {
    for (const RunAnnotation& note : scalelab::run_annotations(run))
        if (note.text.startsWith(start))
            return note;
    return std::nullopt;
}

QStringList texts(const RunRecord& run) {
    QStringList list;
    for (const RunAnnotation& note : scalelab::run_annotations(run))
        list << note.text;
    return list;
}

// Two epochs of 10 steps at `lr`, then a step whose loss is NaN: diverged at step 21.
RunRecord diverged_run(double lr) {
    RunRecord run = fixture_run(fixture_spec(1, lr), "hot", 1000, {0.5, 0.6}, RunState::Diverged);
    run.step = 21;
    const MetricPoint last = run.curve(Metric::TrainLoss).back();
    run.curve(Metric::TrainLoss)
        .push_back(MetricPoint{21, 3, last.samples + 128, last.seconds + 0.1,
                               std::numeric_limits<double>::quiet_NaN()});
    run.curve(Metric::LearningRate).push_back(MetricPoint{21, 3, 0, 0, lr});
    run.message = QStringLiteral("the loss became nan at step 21");
    return run;
}

// A run of three epochs whose mean training losses are `losses`.
RunRecord run_with_epoch_losses(const std::vector<double>& losses) {
    RunRecord run =
        fixture_run(fixture_spec(1), "flat", 1000, std::vector<double>(losses.size(), 0.3));
    for (std::size_t i = 0; i < losses.size(); ++i)
        run.epochs[i].train_loss = losses[i];
    return run;
}

}  // namespace

class TestRunAnnotations : public QObject {
    Q_OBJECT

  private slots:
    void aDivergedRunSaysWhereAndWhy() {
        const RunRecord run = diverged_run(3.2);
        const std::optional<RunAnnotation> diverged = annotation(run, QStringLiteral("diverged"));
        QVERIFY(diverged);
        QCOMPARE(diverged->text,
                 QStringLiteral("diverged at step 21 (loss NaN) – LR 3.2, no warm-up"));
        // At the last loss that can be drawn: the one before the NaN.
        QCOMPARE(diverged->metric, Metric::TrainLoss);
        QVERIFY(diverged->at);
        QCOMPARE(diverged->at->step, 20);
        QCOMPARE(diverged->at->value, run.curve(Metric::TrainLoss)[19].value);
        QCOMPARE(texts(run).front(), diverged->text);
    }

    void theLearningRateHasThreeSignificantDigits() {
        QCOMPARE(annotation(diverged_run(0.123456), QStringLiteral("diverged"))->text,
                 QStringLiteral("diverged at step 21 (loss NaN) – LR 0.123, no warm-up"));
        RunRecord infinite = diverged_run(12.5);
        infinite.curve(Metric::TrainLoss).back().value = std::numeric_limits<double>::infinity();
        QCOMPARE(annotation(infinite, QStringLiteral("diverged"))->text,
                 QStringLiteral("diverged at step 21 (loss inf) – LR 12.5, no warm-up"));
    }

    // Warm-up of 1 epoch ends at step 10, of 3 epochs at step 30: step 21 is after the one and
    // during the other.
    void aDivergenceSaysWhetherWarmupWasOver() {
        RunRecord run = diverged_run(3.2);
        run.spec.warmup_length = 1;
        QCOMPARE(annotation(run, QStringLiteral("diverged"))->text,
                 QStringLiteral("diverged at step 21 (loss NaN) – LR 3.2, after warm-up"));
        run.spec.warmup_length = 3;
        QCOMPARE(annotation(run, QStringLiteral("diverged"))->text,
                 QStringLiteral("diverged at step 21 (loss NaN) – LR 3.2, during warm-up"));
    }

    void aFinishedRunDidNotDiverge() {
        const RunRecord run = fixture_run(fixture_spec(1, 3.2), "fine", 1000, {0.5, 0.6});
        QVERIFY(!annotation(run, QStringLiteral("diverged")));
        QVERIFY(texts(run).isEmpty());
    }

    // 128 images a step at 128 / 1.4 images/s: 1.4 s a step, 14 s an epoch of 10 steps.
    void eachTargetIsMarkedWhereItWasFirstReached() {
        const RunRecord run =
            fixture_run(fixture_spec(1), "steady", 128 / 1.4, {0.80, 0.86, 0.91, 0.92});
        QCOMPARE(texts(run), QStringList({QStringLiteral("reached 0.85 at epoch 2 (28 s)"),
                                          QStringLiteral("reached 0.90 at epoch 3 (42 s)")}));
        const std::optional<RunAnnotation> reached =
            annotation(run, QStringLiteral("reached 0.90"));
        QCOMPARE(reached->metric, Metric::ValAccuracy);
        QVERIFY(reached->at);
        QCOMPARE(reached->at->epoch, 3);
        QCOMPARE(reached->at->step, 30);
        QCOMPARE(reached->at->value, 0.91);
    }

    // 0.3 s an epoch: under ten seconds a tenth is shown.
    void targetsReachedTogetherShareOneNote() {
        const RunRecord run = fixture_run(fixture_spec(1), "quick", 128 / 0.03, {0.5, 0.95});
        QCOMPARE(texts(run),
                 QStringList({QStringLiteral("reached 0.85 and 0.90 at epoch 2 (0.6 s)")}));
        QCOMPARE(annotation(run, QStringLiteral("reached"))->at->epoch, 2);
    }

    void aLossThatDoesNotFallIsStalled() {
        const RunRecord run = run_with_epoch_losses({2.30, 2.10, 2.31});
        const std::optional<RunAnnotation> stalled = annotation(run, QStringLiteral("stalled"));
        QVERIFY(stalled);
        QCOMPARE(
            stalled->text,
            QStringLiteral("stalled: training loss 2.31 at epoch 3, not below 2.3 at epoch 1"));
        QCOMPARE(stalled->metric, Metric::TrainLoss);
        QCOMPARE(stalled->at->step, 30);

        QVERIFY(!annotation(run_with_epoch_losses({2.30, 2.10, 2.29}), QStringLiteral("stalled")));
        // Two epochs are too few to tell.
        QVERIFY(!annotation(run_with_epoch_losses({2.30, 2.40}), QStringLiteral("stalled")));
    }

    // 4 devices × 128 = 512 against the reference 256: linear scaling doubles the LR.
    void aScaledUpLearningRateWithoutWarmupIsNamed() {
        RunSpec spec = fixture_spec(4, 0.2);
        spec.lr_scaling = scalelab::LrScaling::Linear;
        spec.reference_batch = 256;
        RunRecord run = fixture_run(spec, "scaled", 1000, {0.5});
        run.info.cores = 4;
        QCOMPARE(
            texts(run),
            QStringList({QStringLiteral("no warm-up for LR 0.4, scaled up for global batch 512")}));

        run.spec.warmup_length = 1;
        QVERIFY(texts(run).isEmpty());
        run.spec.warmup_length = 0;
        run.spec.lr_scaling = scalelab::LrScaling::None;
        QVERIFY(texts(run).isEmpty());
        // A smaller batch than the reference scales the LR down: nothing to warm up to.
        run.spec.lr_scaling = scalelab::LrScaling::Linear;
        run.spec.reference_batch = 1024;
        QVERIFY(texts(run).isEmpty());
    }

    void aRunOtherProgramsDisturbedSaysSo() {
        RunRecord run = fixture_run(fixture_spec(1), "busy machine", 1000, {0.5, 0.6});
        QVERIFY(texts(run).isEmpty());  // not measured
        run.epochs.back().other_programs_share = 0.09;
        QVERIFY(texts(run).isEmpty());  // the noise of an idle machine
        QVERIFY(!run.disturbed());
        run.epochs.back().other_programs_share = 0.45;
        QVERIFY(run.disturbed());
        QCOMPARE(
            texts(run),
            QStringList({QStringLiteral("other programs used 45% of the cores during this run: its "
                                        "images/s may be low")}));
        // A run listed from the store, its curves not loaded, says it from the store's summary.
        RunRecord listed;
        listed.curves_loaded = false;
        listed.stored_other_programs_share = 0.3;
        QVERIFY(listed.disturbed());
    }

    void moreThreadsThanCoresCannotScale() {
        RunRecord run = fixture_run(fixture_spec(8), "crowded", 1000, {0.5});
        QCOMPARE(run.info.cores, 2);
        QCOMPARE(texts(run),
                 QStringList({QStringLiteral("8 devices on 2 cores: throughput cannot scale")}));
        QVERIFY(!annotation(run, QStringLiteral("8 devices"))->at);

        run.info.devices = 1;
        run.info.threads_per_device = 4;
        run.info.cores = 1;
        QCOMPARE(texts(run), QStringList({QStringLiteral(
                                 "1 device × 4 threads on 1 core: throughput cannot scale")}));

        run.info.devices = 2;
        run.info.threads_per_device = 1;
        run.info.cores = 2;
        QVERIFY(texts(run).isEmpty());
        // Before the run starts its info says nothing yet.
        run.info.devices = 8;
        run.started = false;
        QVERIFY(texts(run).isEmpty());
    }
};

QTEST_MAIN(TestRunAnnotations)
#include "test_run_annotations.moc"
