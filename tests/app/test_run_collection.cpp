#include <QSignalSpy>
#include <QtTest>

#include <algorithm>
#include <vector>

#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include "run_collection.h"
#include "short_runs.h"

using scalelab::Metric;
using scalelab::MetricPoint;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::testing::endless_synthetic_run;
using scalelab::testing::short_synthetic_run;

namespace {

bool ended(const RunCollection& runs, int id) {
    const RunRecord* run = runs.find(id);
    return run != nullptr && !scalelab::is_active(run->state);
}

// A started record with one validation point per epoch at these accuracies.
RunRecord record_with_val_accuracy(const std::vector<double>& accuracies) {
    RunRecord run;
    run.started = true;
    run.state = RunState::Finished;
    run.info.steps_per_epoch = 10;
    run.info.global_batch = 64;
    for (std::size_t i = 0; i < accuracies.size(); ++i) {
        const int epoch = int(i) + 1;
        run.curve(Metric::ValAccuracy)
            .push_back(MetricPoint{epoch * 10, epoch, epoch * 640.0, epoch * 2.5, accuracies[i]});
    }
    return run;
}

}  // namespace

class TestRunCollection : public QObject {
    Q_OBJECT

  private slots:
    void aRunFillsItsCurvesOnThisThread() {
        RunController controller;
        RunCollection runs(controller);
        QSignalSpy added(&runs, &RunCollection::runAdded);
        QSignalSpy curves(&runs, &RunCollection::curvesChanged);

        // Two epochs of 8 steps.
        const int id = runs.start(short_synthetic_run(2), QStringLiteral("first"));
        QCOMPARE(added.count(), 1);
        QCOMPARE(runs.find(id)->name, QStringLiteral("first"));
        QVERIFY(runs.find(id)->state == RunState::Queued);
        QCOMPARE(runs.activeCount(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, id), 60000);

        const RunRecord& run = *runs.find(id);
        QVERIFY2(run.state == RunState::Finished, qPrintable(run.message));
        QCOMPARE(run.info.steps_per_epoch, 8);
        QCOMPARE(run.total_steps(), std::int64_t{16});
        QCOMPARE(run.progress(), 1.0);
        const auto& loss = run.curve(Metric::TrainLoss);
        QCOMPARE(loss.size(), std::size_t{16});
        double seconds = 0;
        for (std::size_t i = 0; i < loss.size(); ++i) {
            QCOMPARE(loss[i].step, std::int64_t(i + 1));
            QCOMPARE(loss[i].samples, double(loss[i].step) * 32);
            QVERIFY(loss[i].seconds > seconds);
            seconds = loss[i].seconds;
        }
        QCOMPARE(run.curve(Metric::LearningRate).size(), std::size_t{16});
        QCOMPARE(run.curve(Metric::ImagesPerSecond).size(), std::size_t{16});
        QVERIFY(run.curve(Metric::NoiseScale).empty());  // one device: no estimate
        const auto& val = run.curve(Metric::ValAccuracy);
        QCOMPARE(val.size(), std::size_t{2});
        QCOMPARE(val[0].step, std::int64_t{8});
        QCOMPARE(val[1].epoch, 2);
        QCOMPARE(run.epochs.size(), std::size_t{2});
        QVERIFY(run.best_val_accuracy().has_value());
        QVERIFY(run.mean_images_per_s().value() > 0);
        QVERIFY(curves.count() >= 18);  // every step and every epoch
        QCOMPARE(runs.activeCount(), 0);
    }

    // A run that ended within its warm-up steps has no steady throughput: no figure, not 0.
    void aRunShorterThanItsWarmUpHasNoImagesPerSecond() {
        RunRecord run;
        run.curves_loaded = true;
        run.step = 4;
        run.train_seconds = 0.5;
        run.info.global_batch = 64;
        scalelab::EpochMetrics epoch;
        epoch.epoch = 1;
        epoch.step = 4;
        epoch.steady_images_per_s = 0;
        run.epochs.push_back(epoch);
        QVERIFY(!run.mean_images_per_s());
        run.epochs.back().steady_images_per_s = 900;
        QCOMPARE(run.mean_images_per_s(), std::optional(900.0));
    }

    void aSweepRunsInOrderUnderItsNames() {
        RunController controller;
        RunCollection runs(controller);
        std::vector<int> started;
        connect(&runs, &RunCollection::runChanged, this, [&](int id) {
            if (runs.find(id)->state == RunState::Running &&
                std::find(started.begin(), started.end(), id) == started.end())
                started.push_back(id);
        });
        std::vector<RunSpec> specs(3, short_synthetic_run());
        specs[1].devices = 2;
        specs[2].lr = 0.1;
        const std::vector<int> ids =
            runs.enqueue(specs, {QStringLiteral("a"), QStringLiteral("b"), QStringLiteral("c")});
        QCOMPARE(runs.ids(), ids);
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, ids[2]), 120000);
        QCOMPARE(started, ids);
        QCOMPARE(runs.find(ids[1])->name, QStringLiteral("b"));
        QCOMPARE(runs.find(ids[1])->info.devices, 2);
        for (int id : ids)
            QVERIFY(runs.find(id)->state == RunState::Finished);
        QVERIFY(runs.find(ids[0])->colour != runs.find(ids[1])->colour);
    }

    void renameHideBaselineAndRemove() {
        RunController controller;
        RunCollection runs(controller);
        const int a = runs.add(record_with_val_accuracy({0.5}));
        const int b = runs.add(record_with_val_accuracy({0.6}));
        QSignalSpy changed(&runs, &RunCollection::runChanged);
        QSignalSpy removed(&runs, &RunCollection::runRemoved);
        QSignalSpy baseline(&runs, &RunCollection::baselineChanged);

        runs.rename(a, QStringLiteral("  baseline run "));
        QCOMPARE(runs.find(a)->name, QStringLiteral("baseline run"));
        runs.rename(a, QStringLiteral("   "));  // blank names are refused
        QCOMPARE(runs.find(a)->name, QStringLiteral("baseline run"));
        runs.setVisible(b, false);
        QVERIFY(!runs.find(b)->visible);
        QCOMPARE(changed.count(), 2);

        runs.setBaseline(a);
        QCOMPARE(runs.baseline(), a);
        runs.setBaseline(999);  // unknown: ignored
        QCOMPARE(runs.baseline(), a);
        QVERIFY(runs.remove(a));
        QVERIFY(!runs.remove(a));
        QCOMPARE(runs.baseline(), 0);
        QCOMPARE(baseline.count(), 2);
        QCOMPARE(removed.count(), 1);
        QCOMPARE(runs.ids(), std::vector<int>{b});
        QVERIFY(runs.find(a) == nullptr);
    }

    void theLogNamesARunByItsIdInTheTable() {
        RunController controller;
        RunCollection runs(controller);
        // Two runs added without the controller: the collection's ids run ahead of its.
        runs.add(record_with_val_accuracy({0.5}));
        runs.add(record_with_val_accuracy({0.5}));
        const auto sink = std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(64);
        spdlog::default_logger()->sinks().push_back(sink);
        const int id = runs.start(short_synthetic_run(1), QStringLiteral("third"));
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, id), 60000);
        spdlog::default_logger()->sinks().pop_back();
        QCOMPARE(id, 3);
        const std::vector<std::string> lines = sink->last_formatted();
        const auto names = [&lines](const std::string& prefix) {
            return std::any_of(lines.begin(), lines.end(), [&](const std::string& line) {
                return line.find(prefix) != std::string::npos;
            });
        };
        QVERIFY(names("run 3: loading"));
        QVERIFY(names("run 3 finished at step"));
        QVERIFY(!names("run 1: loading"));
    }

    void repeatedNamesAreMadeUnique() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord record = record_with_val_accuracy({0.5});
        record.name = QStringLiteral("cnn 2 dev");
        const int first = runs.add(record);
        const int second = runs.add(record);
        const int third = runs.add(record);
        QCOMPARE(runs.find(first)->name, QStringLiteral("cnn 2 dev"));
        // The same settings: a repeat, numbered.
        QCOMPARE(runs.find(second)->name, QStringLiteral("cnn 2 dev (repeat 2)"));
        QCOMPARE(runs.find(third)->name, QStringLiteral("cnn 2 dev (repeat 3)"));
        // Other settings under the same name: the name says which.
        RunRecord other = record;
        other.spec.optimizer = scalelab::OptimizerKind::Lamb;
        other.spec.seed = 7;
        const int fourth = runs.add(other);
        QCOMPARE(runs.find(fourth)->name, QStringLiteral("cnn 2 dev, optimizer lamb, seed 7"));
        const int fifth = runs.add(other);
        QCOMPARE(runs.find(fifth)->name,
                 QStringLiteral("cnn 2 dev, optimizer lamb, seed 7 (repeat 2)"));
    }

    void removingARunningRunStopsItAndDropsItsUpdates() {
        RunController controller;
        RunCollection runs(controller);
        const int id = runs.start(endless_synthetic_run());
        QTRY_VERIFY_WITH_TIMEOUT(runs.find(id)->step >= 1, 60000);
        QVERIFY(runs.remove(id));
        QTRY_VERIFY_WITH_TIMEOUT(!controller.busy(), 10000);
        QCoreApplication::processEvents();  // updates still in flight arrive for nobody
        QVERIFY(runs.find(id) == nullptr);
        QCOMPARE(runs.activeCount(), 0);
    }

    void stopEndsAQueuedRunAsCancelled() {
        RunController controller;
        RunCollection runs(controller);
        const int running = runs.start(endless_synthetic_run());
        const int queued = runs.start(short_synthetic_run());
        runs.stop(queued);
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, queued), 5000);
        QVERIFY(runs.find(queued)->state == RunState::Cancelled);
        runs.stop(running);
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, running), 60000);
        QVERIFY(runs.find(running)->state == RunState::Cancelled);
    }

    void timeToTargetIsTheFirstCrossingOfTheTargetAccuracy() {
        RunRecord run = record_with_val_accuracy({0.80, 0.91, 0.88, 0.93});
        run.spec.target_accuracy = 0.9;
        const auto reached = run.time_to_target();
        QVERIFY(reached.has_value());
        QCOMPARE(reached->epoch, 2);
        QCOMPARE(reached->step, std::int64_t{20});
        QCOMPARE(reached->seconds, 5.0);
        QCOMPARE(reached->images, 1280.0);
        QCOMPARE(run.best_val_accuracy().value(), 0.93);

        run.spec.target_accuracy = 0.95;
        QVERIFY(!run.time_to_target().has_value());

        // No target accuracy: the highest of the recorded targets.
        run.spec.target_accuracy = 0;
        run.targets = {{0.85, 3.0, 12, 2, 768.0}, {0.90, 5.0, 20, 2, 1280.0}};
        QCOMPARE(run.time_to_target()->target, 0.90);
    }

    void warmupEndsAfterItsLengthInSteps() {
        RunRecord run = record_with_val_accuracy({});
        QVERIFY(!run.warmup_end_step().has_value());
        run.spec.warmup_length = 2.5;
        run.spec.warmup_unit = scalelab::WarmupUnit::Epochs;
        QCOMPARE(run.warmup_end_step().value(), 25.0);
        run.spec.warmup_unit = scalelab::WarmupUnit::Steps;
        QCOMPARE(run.warmup_end_step().value(), 2.5);
    }

    void etaFollowsThePaceSoFar() {
        RunRecord run = record_with_val_accuracy({});
        run.state = RunState::Running;
        run.spec.epochs = 4;  // 40 steps
        QVERIFY(!run.eta_seconds().has_value());
        run.step = 10;
        run.train_seconds = 5.0;
        QCOMPARE(run.eta_seconds().value(), 15.0);
        QCOMPARE(run.progress(), 0.25);
    }
};

QTEST_GUILESS_MAIN(TestRunCollection)
#include "test_run_collection.moc"
