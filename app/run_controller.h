#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "train/metrics.h"
#include "train/run_spec.h"

namespace scalelab {

class Trainer;
namespace data {
struct TrainTest;
}

// Runs RunSpecs one at a time, in the order they were given, off the caller's (GUI) thread.
//
// Threading: the controller owns one std::thread, started by the constructor and joined by the
// destructor, that takes runs from a FIFO queue. For each run it loads the dataset
// (data::load_dataset), constructs the Trainer and calls Trainer::run(), all on that thread; the
// trainer's own device threads report through a private MetricsSink that emits the signals
// below from the trainer's threads. A problem at any point (a spec that does not validate, a
// missing dataset, a trainer that throws) ends that run as RunStatus::Failed with the message;
// nothing is thrown to the caller.
//
// Recording: a run queued with a store id (its row in the run store at storePath(), created by
// the caller with RunStore::create_run, so that a queued run is stored as created) is recorded
// through a RunRecorder, which writes from a thread of its own. Its end reaches runEnded only
// once the store holds it. When recording fails (a full disk), the run is cancelled and ends as
// Failed with the recorder's reason.
//
// Signals are emitted from threads the controller owns, never from the caller's, with the
// default Qt::AutoConnection: a receiver must live in another thread (the GUI thread) or connect
// with Qt::QueuedConnection, so that the slot runs in its own thread's event loop and the
// trainer never waits on it. (A Qt::DirectConnection would run the slot on the trainer's thread,
// inside the step.) The exception is runEnded for a run that stop() removes from the queue: it
// is emitted by stop() itself, in the caller's thread.
//
// Order of signals for one run: runStarted (from the trainer, before the first step), then
// stepReported and epochReported, then exactly one runEnded. A run that fails or is cancelled
// before training starts (bad spec, missing data, stopped while loading or queued) gets only
// runEnded. queueChanged is emitted whenever the queued or running runs change (start, enqueue,
// stop, a run beginning or ending), from whichever thread made the change.
//
// Methods are to be called from one thread (the one the controller lives in).
class RunController : public QObject {
    Q_OBJECT

  public:
    explicit RunController(QObject* parent = nullptr);
    // Cancels the running run, drops the queue (no runEnded for the dropped runs) and joins the
    // worker: nothing the controller started outlives it. Returns once the current step ends.
    ~RunController() override;

    RunController(const RunController&) = delete;
    RunController& operator=(const RunController&) = delete;

    // The run store that store ids given to start() and enqueue() are in; empty: none. Runs
    // already queued keep recording into the store they were queued with.
    void setStorePath(const QString& path);
    QString storePath() const { return store_path_; }

    // Queues one run and returns its id (ids count from 1 and only grow). It starts at once when
    // nothing else is running or queued, otherwise after the runs before it. With a store id
    // (and a store path), the run is recorded into the store under that id.
    int start(const RunSpec& spec, std::int64_t store_id = 0);
    // Queues runs (a sweep) to run one after another in this order; returns their ids.
    // `store_ids` is empty (nothing recorded) or holds one store id per spec. `shown_ids` are the
    // numbers the runs are shown under (the run table's, the store's): the log names each run by
    // it, so that "run 7" in the log is run 7 in the table; empty: the controller's ids.
    std::vector<int> enqueue(std::vector<RunSpec> specs, std::vector<std::int64_t> store_ids = {},
                             std::vector<int> shown_ids = {});
    // Cancels the run with this id if it is running (it ends as Cancelled before its next step)
    // or removes it from the queue (runEnded with Cancelled at once). Unknown or finished ids
    // are ignored.
    void stop(int id);
    // Stops the running run and empties the queue.
    void stop_all();

    // True while a run is running or queued.
    bool busy() const;
    // The running run's id, or 0.
    int current() const;
    // The queued runs' ids, in the order they will run (the running one excluded).
    std::vector<int> queued() const;

    // For tests only (fault injection): called on the controller's thread, under its lock (so
    // it must not call the controller), with each run's trainer before it runs, to set the
    // trainer's step or communicator hook. Unset, the default: nothing is called.
    void setTrainerHook(std::function<void(Trainer&)> hook);

  signals:
    void runStarted(int id, scalelab::RunInfo info);
    void stepReported(int id, scalelab::StepMetrics step);
    void epochReported(int id, scalelab::EpochMetrics epoch);
    void runEnded(int id, scalelab::RunEnd end);
    void queueChanged();

  private:
    struct Job {
        int id = 0;
        RunSpec spec;
        QString store_path;  // empty: not recorded
        std::int64_t store_id = 0;
        int shown_id = 0;  // the number the log names the run by
    };

    void work();
    void execute(const Job& job);
    // Trains the loaded run, reporting to `sink`.
    void train(const Job& job, const data::TrainTest& data, MetricsSink& sink);
    // Under mutex_: asks the running run to stop before its next step, when it is run `id`; true
    // if it was.
    bool cancel_if_running(int id);
    // Under mutex_: whether the running run has been asked to stop.
    bool current_cancelled() const;

    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::deque<Job> queue_;
    QString store_path_;  // the controller's thread only
    int next_id_ = 1;
    int current_ = 0;              // the running run, 0 when none
    int current_shown_ = 0;        // its shown id
    bool cancel_current_ = false;  // stop() reached the running run
    Trainer* trainer_ = nullptr;   // the running run's trainer, once constructed
    std::function<void(Trainer&)> trainer_hook_;
    bool shutting_down_ = false;
    std::thread worker_;  // last: started after the members it uses
};

// Registers the metric structs for queued connections and QVariant (the constructor calls it;
// idempotent).
void register_run_metatypes();

}  // namespace scalelab

Q_DECLARE_METATYPE(scalelab::RunInfo)
Q_DECLARE_METATYPE(scalelab::StepMetrics)
Q_DECLARE_METATYPE(scalelab::EpochMetrics)
Q_DECLARE_METATYPE(scalelab::RunEnd)
