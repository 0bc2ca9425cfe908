#include <QElapsedTimer>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <limits>
#include <mutex>
#include <thread>
#include <vector>

#include "file_size_limit.h"
#include "run_recorder.h"
#include "run_store.h"
#include "short_runs.h"
#include "sqlite_file.h"

using scalelab::EpochMetrics;
using scalelab::Metric;
using scalelab::MetricRow;
using scalelab::RunEnd;
using scalelab::RunInfo;
using scalelab::RunRecord;
using scalelab::RunRecorder;
using scalelab::RunState;
using scalelab::RunStatus;
using scalelab::RunStore;
using scalelab::StepMetrics;
using scalelab::StoredRun;
using scalelab::StoreError;
using scalelab::TargetReached;
using scalelab::testing::FileSizeLimit;
using scalelab::testing::short_synthetic_run;
using scalelab::testing::SqliteFile;

namespace {

constexpr int global_batch = 64;

RunInfo run_info(int steps_per_epoch) {
    RunInfo info;
    info.global_batch = global_batch;
    info.steps_per_epoch = steps_per_epoch;
    return info;
}

// Step `step` of a synthetic run: 0.01 s each, the noise scale known on even steps only.
StepMetrics step_metrics(std::int64_t step, int steps_per_epoch) {
    StepMetrics metrics;
    metrics.step = step;
    metrics.epoch = int((step - 1) / steps_per_epoch) + 1;
    metrics.step_in_epoch = int((step - 1) % steps_per_epoch) + 1;
    metrics.steps_per_epoch = steps_per_epoch;
    metrics.loss = 2.0 / double(step);
    metrics.accuracy = 1.0 - 1.0 / double(step + 1);
    metrics.lr = 0.1;
    metrics.seconds = 0.01;
    metrics.images_per_s = global_batch / metrics.seconds;
    metrics.noise_scale =
        step % 2 == 0 ? 50.0 + double(step) : std::numeric_limits<double>::quiet_NaN();
    return metrics;
}

EpochMetrics epoch_metrics(int epoch, int steps_per_epoch, double val_accuracy) {
    EpochMetrics metrics;
    metrics.epoch = epoch;
    metrics.step = std::int64_t{epoch} * steps_per_epoch;
    metrics.val_loss = 1.0 - val_accuracy;
    metrics.val_accuracy = val_accuracy;
    metrics.steady_images_per_s = 6000.0 + epoch;
    return metrics;
}

// What on_failure saw, from the writer thread.
struct Failures {
    std::mutex mutex;
    std::vector<QString> reasons;

    auto callback() {
        return [this](const QString& reason) {
            std::lock_guard lock(mutex);
            reasons.push_back(reason);
        };
    }
    std::vector<QString> seen() {
        std::lock_guard lock(mutex);
        return reasons;
    }
};

}  // namespace

class TestRunRecorder : public QObject {
    Q_OBJECT

  private slots:
    void init() { QVERIFY(dir_.isValid()); }

    void recordsStepsEpochsAndTheEnd() {
        const QString path = dir_.filePath(QStringLiteral("recorded.sqlite"));
        constexpr int steps_per_epoch = 40;
        const std::int64_t id =
            RunStore::open(path)->create_run(short_synthetic_run(2), QStringLiteral("fed"));
        const TargetReached reached{
            .target = 0.85, .seconds = 0.8, .step = 80, .epoch = 2, .images = 80.0 * 64};
        {
            RunRecorder recorder(path, id);
            // The trainer reports from its own threads.
            std::thread trainer([&] {
                recorder.on_start(run_info(steps_per_epoch));
                for (int epoch = 1; epoch <= 2; ++epoch) {
                    for (int i = 1; i <= steps_per_epoch; ++i)
                        recorder.on_step(
                            step_metrics((epoch - 1) * steps_per_epoch + i, steps_per_epoch));
                    EpochMetrics metrics =
                        epoch_metrics(epoch, steps_per_epoch, 0.8 + 0.05 * epoch);
                    if (epoch == 2)
                        metrics.reached = {reached};
                    recorder.on_epoch(metrics);
                }
                recorder.on_end(RunEnd{.status = RunStatus::ReachedTarget,
                                       .message = {},
                                       .step = 80,
                                       .epoch = 2,
                                       .targets = {reached}});
            });
            trainer.join();
        }

        auto store = RunStore::open(path);
        const StoredRun run = store->run(id);
        QCOMPARE(run.state, RunState::ReachedTarget);
        QVERIFY(run.started);
        QCOMPARE(run.info.steps_per_epoch, steps_per_epoch);
        QCOMPARE(run.steps, std::int64_t{80});
        QCOMPARE(run.epochs, 2);
        QCOMPARE(run.train_seconds, 80 * 0.01);
        QCOMPARE(run.best_val_accuracy, std::optional<double>(0.9));
        QCOMPARE(run.mean_images_per_s, std::optional<double>(6002.0));
        QCOMPARE(run.targets.size(), std::size_t{1});
        QCOMPARE(run.targets[0].step, std::int64_t{80});

        const RunRecord record = store->load_record(id);
        QCOMPARE(record.curve(Metric::TrainLoss).size(), std::size_t{80});
        QCOMPARE(record.curve(Metric::LearningRate).size(), std::size_t{80});
        QCOMPARE(record.curve(Metric::NoiseScale).size(), std::size_t{40});  // finite ones
        QCOMPARE(record.curve(Metric::ValAccuracy).size(), std::size_t{2});
        const auto& loss = record.curve(Metric::TrainLoss);
        for (std::size_t i = 0; i < loss.size(); ++i) {
            const StepMetrics expected = step_metrics(std::int64_t(i) + 1, steps_per_epoch);
            QCOMPARE(loss[i].step, expected.step);
            QCOMPARE(loss[i].epoch, expected.epoch);
            QCOMPARE(loss[i].value, expected.loss);
            QCOMPARE(loss[i].samples, double(expected.step) * global_batch);
            QVERIFY(std::abs(loss[i].seconds - 0.01 * double(expected.step)) < 1e-12);
        }
        const auto& val = record.curve(Metric::ValAccuracy);
        QCOMPARE(val[1].step, std::int64_t{80});
        QCOMPARE(val[1].value, 0.9);
        QCOMPARE(val[1].seconds, loss.back().seconds);
        QCOMPARE(record.epochs.size(), std::size_t{2});
        QCOMPARE(record.epochs[1].reached.size(), std::size_t{1});
    }

    // Another program holding the store's write lock (a large delete, an import) delays the
    // recording but loses nothing and fails nothing: once the lock goes every row is there.
    void aLockedStoreDelaysRecordingAndLosesNothing() {
        const QString path = dir_.filePath(QStringLiteral("busy.sqlite"));
        constexpr int steps_per_epoch = 40;
        const std::int64_t id =
            RunStore::open(path)->create_run(short_synthetic_run(1), QStringLiteral("busy"));
        {
            RunRecorder recorder(path, id);
            {
                const SqliteFile other(path);
                other.exec(QStringLiteral("BEGIN IMMEDIATE"));
                recorder.on_start(run_info(steps_per_epoch));
                for (int i = 1; i <= steps_per_epoch; ++i)
                    recorder.on_step(step_metrics(i, steps_per_epoch));
                recorder.on_epoch(epoch_metrics(1, steps_per_epoch, 0.8));
                // Longer than the store's 5 s busy timeout: at least one write found it locked.
                QTest::qWait(7000);
                QVERIFY(!recorder.failure());
                other.exec(QStringLiteral("ROLLBACK"));
            }
            recorder.on_end(RunEnd{.status = RunStatus::Finished,
                                   .message = {},
                                   .step = steps_per_epoch,
                                   .epoch = 1,
                                   .targets = {}});
            recorder.flush();
            QVERIFY(!recorder.failure());
        }
        auto store = RunStore::open(path);
        QCOMPARE(store->run(id).state, RunState::Finished);
        QCOMPARE(store->load_record(id).curve(Metric::TrainLoss).size(),
                 std::size_t{steps_per_epoch});
    }

    void commitsWithinASecondWithoutFlush() {
        const QString path = dir_.filePath(QStringLiteral("live.sqlite"));
        auto store = RunStore::open(path);
        const std::int64_t id = store->create_run(short_synthetic_run(), QStringLiteral("live"));
        RunRecorder recorder(path, id);
        std::thread trainer([&] {
            recorder.on_start(run_info(100));
            for (int step = 1; step <= 10; ++step)
                recorder.on_step(step_metrics(step, 100));
        });
        trainer.join();
        // The start is committed at once, the steps within the second.
        QElapsedTimer since_last_step;
        since_last_step.start();
        QTRY_VERIFY_WITH_TIMEOUT(store->run(id).state == RunState::Running, 1000);
        QTRY_VERIFY_WITH_TIMEOUT(store->metrics(id).size() == 10 * 4 + 5, 3000);
        QVERIFY2(since_last_step.elapsed() < 2000,
                 qPrintable(QStringLiteral("%1 ms").arg(since_last_step.elapsed())));
        QCOMPARE(store->run(id).steps, std::int64_t{10});

        recorder.on_end(RunEnd{.status = RunStatus::Cancelled,
                               .message = "stopped from the window",
                               .step = 10,
                               .epoch = 1,
                               .targets = {}});
        QTRY_VERIFY_WITH_TIMEOUT(store->run(id).state == RunState::Cancelled, 1000);
        QCOMPARE(store->run(id).message, QStringLiteral("stopped from the window"));
        QVERIFY(!recorder.failure());
    }

    void failedWriteStopsRecordingOnceAndKeepsEarlierRows() {
        const QString path = dir_.filePath(QStringLiteral("full.sqlite"));
        auto store = RunStore::open(path);
        const std::int64_t id = store->create_run(short_synthetic_run(), QStringLiteral("full"));
        Failures failures;
        RunRecorder recorder(path, id, failures.callback());
        recorder.on_start(run_info(1000));
        for (int step = 1; step <= 20; ++step)
            recorder.on_step(step_metrics(step, 1000));
        recorder.flush();
        QVERIFY(!recorder.failure());
        const std::size_t kept = store->metrics(id).size();
        QCOMPARE(kept, std::size_t{20 * 4 + 10});

        {
            // No file of this process may grow any more: the next commit cannot be written.
            const qint64 largest =
                std::max(QFileInfo(path).size(), QFileInfo(path + QStringLiteral("-wal")).size());
            const FileSizeLimit full{rlim_t(largest)};
            for (int step = 21; step <= 3000; ++step)
                recorder.on_step(step_metrics(step, 1000));
            recorder.flush();
            for (int step = 3001; step <= 3100; ++step)
                recorder.on_step(step_metrics(step, 1000));
            recorder.flush();
        }
        const std::optional<QString> failure = recorder.failure();
        QVERIFY(failure);
        QVERIFY2(failure->contains(path) &&
                     failure->contains(QStringLiteral("was recorded before is kept")),
                 qPrintable(*failure));
        QCOMPARE(failures.seen(), std::vector<QString>{*failure});

        // Space again: the end is written as a failure with the reason, the rows from before
        // the failure are all there and nothing after it.
        recorder.on_end(RunEnd{.status = RunStatus::Cancelled,
                               .message = "cancelled after the failure",
                               .step = 3100,
                               .epoch = 4,
                               .targets = {}});
        QTRY_VERIFY_WITH_TIMEOUT(store->run(id).state == RunState::Failed, 2000);
        QCOMPARE(store->run(id).message, *failure);
        QCOMPARE(store->metrics(id).size(), kept);
        QCOMPARE(failures.seen().size(), std::size_t{1});
    }

    void storeThatCannotBeOpenedFailsOnce() {
        const QString not_a_folder = dir_.filePath(QStringLiteral("file"));
        QFile file(not_a_folder);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        Failures failures;
        RunRecorder recorder(not_a_folder + QStringLiteral("/runs.sqlite"), 1, failures.callback());
        recorder.on_start(run_info(10));
        recorder.on_step(step_metrics(1, 10));
        recorder.flush();
        QVERIFY(recorder.failure());
        QVERIFY2(recorder.failure()->contains(QStringLiteral("cannot create the folder")),
                 qPrintable(*recorder.failure()));
        recorder.on_end(RunEnd{});
        recorder.flush();
        QCOMPARE(failures.seen().size(), std::size_t{1});
    }

  private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestRunRecorder)
#include "test_run_recorder.moc"
