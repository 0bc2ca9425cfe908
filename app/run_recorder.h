#pragma once

#include <QString>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "run_store.h"
#include "train/metrics.h"

namespace scalelab {

// Records one run into the store, off the trainer's threads: the MetricsSink callbacks only
// queue rows (under a mutex, no I/O); a writer thread with its own RunStore connection commits
// them in one transaction at least once a second (so a killed process loses at most the last
// second), and at once for the run's start and end. Per step it stores train_loss,
// train_accuracy, lr, images_per_s and noise_scale (when finite); per epoch val_loss and
// val_accuracy at the epoch's last step, which may come in a later commit than that step's
// rows. Every commit also updates the run's summary and heartbeat.
//
// A store another program holds locked (a large delete or import, a backup) does not stop the
// run: the writer keeps what it could not write and tries again at each commit, training going
// on meanwhile, and says so in the log; only a lock held past longest_lock counts as a failure.
// A write that fails otherwise (disk full, the file gone) stops recording: failure() then holds the
// reason, `on_failure` is called once from the writer thread (the owner cancels the run there),
// whatever was committed before stays, and on_end marks the run Failed with the reason when the
// store still takes that one row.
class RunRecorder final : public MetricsSink {
  public:
    // The run must already exist in the store (RunStore::create_run).
    RunRecorder(const QString& store_path, std::int64_t run_id,
                std::function<void(const QString& reason)> on_failure = {});
    // Commits what is queued and joins the writer.
    ~RunRecorder() override;

    RunRecorder(const RunRecorder&) = delete;
    RunRecorder& operator=(const RunRecorder&) = delete;

    void on_start(const RunInfo& info) override;
    void on_step(const StepMetrics& step) override;
    void on_epoch(const EpochMetrics& epoch) override;
    void on_end(const RunEnd& end) override;

    // Waits until everything queued so far is committed (or recording failed).
    void flush();
    std::optional<QString> failure() const;

    // The longest another program may hold the store's write lock before recording gives up.
    static constexpr std::chrono::seconds longest_lock{600};

  private:
    // What the callbacks queued since the writer last took it.
    struct Batch {
        std::optional<RunInfo> start;
        std::vector<MetricRow> rows;
        std::vector<EpochMetrics> epochs;
        std::optional<RunEnd> end;

        bool empty() const { return !start && rows.empty() && epochs.empty() && !end; }
        // Appends `later` (queued after this one) to this batch.
        void append(Batch&& later);
    };

    void write_loop();
    // Writes what `pending` holds in order (start, rows and epochs or a `heartbeat`, end),
    // taking each part out once it is committed; throws StoreError from the part that failed,
    // which stays. `active`: the run started and has not ended.
    void write(RunStore& store, Batch& pending, bool& active, bool heartbeat);
    // Runs `add` on the queue under the mutex; `urgent` wakes the writer now instead of at the
    // next second.
    template <typename Add>
    void enqueue(bool urgent, Add&& add);
    // Records the first failure and tells the owner, once.
    void fail(const QString& reason);

    const QString store_path_;
    const std::int64_t run_id_;
    const std::function<void(const QString&)> on_failure_;

    mutable std::mutex mutex_;
    std::condition_variable wake_writer_;
    std::condition_variable committed_;
    Batch queued_;
    std::uint64_t queued_events_ = 0;     // callbacks queued so far
    std::uint64_t committed_events_ = 0;  // of those, committed (or dropped after a failure)
    bool urgent_ = false;
    bool stopping_ = false;
    std::optional<QString> failure_;

    double train_seconds_ = 0;  // the steps' wall times summed; the trainer's thread only
    std::thread writer_;        // last: starts once everything it uses exists
};

}  // namespace scalelab
