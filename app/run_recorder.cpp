#include "run_recorder.h"

#include <chrono>
#include <cmath>
#include <utility>

#include <spdlog/spdlog.h>

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

void RunRecorder::Batch::append(Batch&& later) {
    if (later.start)
        start = later.start;
    rows.insert(rows.end(), std::make_move_iterator(later.rows.begin()),
                std::make_move_iterator(later.rows.end()));
    epochs.insert(epochs.end(), std::make_move_iterator(later.epochs.begin()),
                  std::make_move_iterator(later.epochs.end()));
    if (later.end)
        end = later.end;
}

void RunRecorder::write(RunStore& store, Batch& pending, bool& active, bool heartbeat) {
    if (pending.start) {
        store.mark_started(run_id_, *pending.start);
        pending.start.reset();
        active = true;
    }
    if (!pending.rows.empty() || !pending.epochs.empty() || heartbeat) {
        store.append_metrics(run_id_, pending.rows, pending.epochs);
        pending.rows.clear();
        pending.epochs.clear();
    }
    if (pending.end) {
        store.mark_ended(run_id_, run_state(pending.end->status),
                         QString::fromStdString(pending.end->message));
        pending.end.reset();
        active = false;
    }
}

void RunRecorder::write_loop() {
    // Qt SQL's rule: a connection is used by the thread that opened it, so the writer opens its
    // own.
    std::unique_ptr<RunStore> store;
    try {
        store = RunStore::open(store_path_);
        store->require_sound();
    } catch (const StoreError& error) {
        fail(failure_reason(store_path_, error));
    }
    bool active = false;  // started and not ended: its heartbeat matters
    Clock::time_point last_commit = Clock::now();
    Batch pending;  // taken from the queue, not yet committed (the store was locked)
    bool waiting_for_lock = false;  // the last attempt found the store locked, since:
    Clock::time_point locked_since;
    for (bool stop = false; !stop;) {
        std::uint64_t taken = 0;
        {
            std::unique_lock lock(mutex_);
            wake_writer_.wait_for(lock, commit_interval, [this] { return urgent_ || stopping_; });
            pending.append(std::exchange(queued_, Batch{}));
            taken = queued_events_;
            urgent_ = false;
            stop = stopping_;
        }
        const bool heartbeat_due = active && Clock::now() - last_commit >= heartbeat_interval;
        // After a failure the batches are dropped: the owner cancels the run.
        if (store && !failure() && (!pending.empty() || heartbeat_due)) {
            try {
                write(*store, pending, active, heartbeat_due);
                last_commit = Clock::now();
                if (waiting_for_lock)
                    spdlog::info(
                        "the run store is free again: the rows kept meanwhile are recorded");
                waiting_for_lock = false;
            } catch (const StoreError& error) {
                const bool locked = error.kind() == StoreError::Kind::Locked;
                if (locked && !waiting_for_lock) {
                    waiting_for_lock = true;
                    locked_since = Clock::now();
                    spdlog::warn("{}: recording waits and training goes on; nothing is lost",
                                 error.what());
                }
                if (locked && Clock::now() - locked_since <= longest_lock) {
                    // What is pending stays for the next attempt (each one waits the store's
                    // busy timeout); flush() and the end of the run wait for it.
                    stop = false;
                    continue;
                }
                fail(failure_reason(store_path_, error));
            }
        }
        if (pending.end && store && failure()) {
            try {
                store->mark_ended(run_id_, RunState::Failed, *failure());
            } catch (const StoreError&) {
                // The store that failed takes no more: the reason went to the owner already.
            }
        }
        if (failure())
            pending = Batch{};
        {
            std::lock_guard lock(mutex_);
            committed_events_ = taken;
        }
        committed_.notify_all();
    }
}

}  // namespace scalelab
