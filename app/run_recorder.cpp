#include "run_recorder.h"

#include <chrono>
#include <cmath>
#include <utility>

namespace scalelab {

namespace {

using Clock = std::chrono::steady_clock;

// A killed process loses at most this much of its run.
constexpr auto commit_interval = std::chrono::seconds(1);
// While a run reports nothing (a long evaluation), its heartbeat still says that it lives.
constexpr auto heartbeat_interval = std::chrono::seconds(10);

QString failure_reason(const QString& path, const StoreError& error) {
    if (error.kind() == StoreError::Kind::DiskFull)
        return QStringLiteral(
                   "the disk holding %1 is full: free space; the run stopped, what was "
                   "recorded before is kept")
            .arg(path);
    return QStringLiteral("recording the run stopped: %1; what was recorded before is kept")
        .arg(QString::fromUtf8(error.what()));
}

}  // namespace

RunRecorder::RunRecorder(const QString& store_path, std::int64_t run_id,
                         std::function<void(const QString& reason)> on_failure)
    : store_path_(store_path),
      run_id_(run_id),
      on_failure_(std::move(on_failure)),
      writer_([this] { write_loop(); }) {}

RunRecorder::~RunRecorder() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_writer_.notify_one();
    writer_.join();
}

template <typename Add>
void RunRecorder::enqueue(bool urgent, Add&& add) {
    {
        std::lock_guard lock(mutex_);
        add(queued_);
        ++queued_events_;
        urgent_ = urgent_ || urgent;
    }
    if (urgent)
        wake_writer_.notify_one();
}

void RunRecorder::on_start(const RunInfo& info) {
    enqueue(true, [&](Batch& batch) { batch.start = info; });
}

void RunRecorder::on_step(const StepMetrics& step) {
    train_seconds_ += step.seconds;
    const auto row = [&](Metric metric, double value) {
        return MetricRow{.step = step.step,
                         .epoch = step.epoch,
                         .wall_time = train_seconds_,
                         .metric = metric,
                         .value = value};
    };
    enqueue(false, [&](Batch& batch) {
        batch.rows.push_back(row(Metric::TrainLoss, step.loss));
        batch.rows.push_back(row(Metric::TrainAccuracy, step.accuracy));
        batch.rows.push_back(row(Metric::LearningRate, step.lr));
        batch.rows.push_back(row(Metric::ImagesPerSecond, step.images_per_s));
        if (std::isfinite(step.noise_scale))
            batch.rows.push_back(row(Metric::NoiseScale, step.noise_scale));
    });
}

void RunRecorder::on_epoch(const EpochMetrics& epoch) {
    const auto row = [&](Metric metric, double value) {
        return MetricRow{.step = epoch.step,
                         .epoch = epoch.epoch,
                         .wall_time = train_seconds_,
                         .metric = metric,
                         .value = value};
    };
    enqueue(false, [&](Batch& batch) {
        batch.rows.push_back(row(Metric::ValLoss, epoch.val_loss));
        batch.rows.push_back(row(Metric::ValAccuracy, epoch.val_accuracy));
        batch.epochs.push_back(epoch);
    });
}

void RunRecorder::on_end(const RunEnd& end) {
    enqueue(true, [&](Batch& batch) { batch.end = end; });
}

void RunRecorder::flush() {
    std::unique_lock lock(mutex_);
    const std::uint64_t target = queued_events_;
    urgent_ = true;
    wake_writer_.notify_one();
    // After a failure the writer goes on taking (and dropping) batches, so this returns too,
    // and only once on_failure has run.
    committed_.wait(lock, [&] { return committed_events_ >= target; });
}

std::optional<QString> RunRecorder::failure() const {
    std::lock_guard lock(mutex_);
    return failure_;
}

void RunRecorder::fail(const QString& reason) {
    {
        std::lock_guard lock(mutex_);
        if (failure_)
            return;
        failure_ = reason;
    }
    if (on_failure_)
        on_failure_(reason);
}

void RunRecorder::write_loop() {
    // Qt SQL's rule: a connection is used by the thread that opened it, so the writer opens its
    // own.
    std::unique_ptr<RunStore> store;
    try {
        store = RunStore::open(store_path_);
    } catch (const StoreError& error) {
        fail(failure_reason(store_path_, error));
    }
    bool active = false;  // started and not ended: its heartbeat matters
    Clock::time_point last_commit = Clock::now();
    for (bool stop = false; !stop;) {
        Batch batch;
        std::uint64_t taken = 0;
        {
            std::unique_lock lock(mutex_);
            wake_writer_.wait_for(lock, commit_interval, [this] { return urgent_ || stopping_; });
            batch = std::exchange(queued_, Batch{});
            taken = queued_events_;
            urgent_ = false;
            stop = stopping_;
        }
        // After a failure the batches are dropped: the owner cancels the run.
        if (store && !failure()) {
            try {
                if (batch.start) {
                    store->mark_started(run_id_, *batch.start);
                    active = true;
                    last_commit = Clock::now();
                }
                const bool heartbeat_due =
                    active && Clock::now() - last_commit >= heartbeat_interval;
                if (!batch.rows.empty() || !batch.epochs.empty() || heartbeat_due) {
                    store->append_metrics(run_id_, batch.rows, batch.epochs);
                    last_commit = Clock::now();
                }
                if (batch.end) {
                    store->mark_ended(run_id_, run_state(batch.end->status),
                                      QString::fromStdString(batch.end->message));
                    active = false;
                }
            } catch (const StoreError& error) {
                fail(failure_reason(store_path_, error));
            }
        }
        if (batch.end && store && failure()) {
            try {
                store->mark_ended(run_id_, RunState::Failed, *failure());
            } catch (const StoreError&) {
                // The store that failed takes no more: the reason went to the owner already.
            }
        }
        {
            std::lock_guard lock(mutex_);
            committed_events_ = taken;
        }
        committed_.notify_all();
    }
}

}  // namespace scalelab
