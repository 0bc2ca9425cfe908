#pragma once

#include <QObject>
#include <QString>
#include <QStringList>
#include <QTimer>

#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "run_controller.h"
#include "run_record.h"

namespace scalelab {

class RunStore;
struct StoredRun;

// The most runs a sweep of the form or a lesson queues at once: a sweep or lesson larger than
// this is refused with a message rather than queued for days.
inline constexpr qsizetype most_runs_queued_at_once = 1000;

// A run as the store lists it: its summary without its curves, hidden on the charts.
RunRecord stored_record(const StoredRun& stored);

// The runs of this session and their whole curves, kept on the GUI thread. It starts runs
// through a RunController and turns the controller's queued signals into records; views (run
// table, charts, scaling view) read records from here and listen to the signals below.
//
// With a run store (setStore), the runs are the store's: every stored run is listed with its
// summary, hidden on the charts, its curves loaded when it is shown (setVisible) or asked for
// (loadCurves); runs started here are created in the store when queued and recorded by the
// controller; rename, tags and removal are written to the store. Runs written by another
// process (scalelab-cli train --store) are followed by polling the store's change counter every
// poll_interval_ms: new runs appear, states and summaries update, and the curves of shown runs
// that are still running grow. Without a store, runs live in memory for the session.
//
// Invariants: a run's id never changes (with a store it is the store's id); ids() lists runs in
// the order they were added (stored runs oldest first); a record's colour is fixed when it is
// added; no two runs added in this session share a name (a repeated name gets " (2)", " (3)",
// ...). Every method runs on the thread the collection lives in, and so does every signal (the
// controller's are queued to it).
class RunCollection : public QObject {
    Q_OBJECT

  public:
    static constexpr int poll_interval_ms = 1000;

    explicit RunCollection(RunController& controller, QObject* parent = nullptr);
    ~RunCollection() override;

    // Replaces every run with those of `store` (null: runs are kept in memory only from now on).
    // Throws StoreError when the store cannot be listed, and changes nothing then. False (and
    // nothing changes) while runs started here are queued or running: they record into the
    // current store.
    bool setStore(std::unique_ptr<RunStore> store);
    // The store, or null.
    RunStore* store() const { return store_.get(); }
    // Whether runs started here are queued or running (and record into the current store).
    bool busy() const { return !by_controller_id_.empty() || !delete_when_ended_.empty(); }

    // Queues one run (named `name`, or "run <id>") and returns its id; 0 when the store could
    // not create it (storeError says why).
    int start(const RunSpec& spec, const QString& name = {});
    // Queues runs to run one after another in this order (a sweep); returns the ids of those
    // queued (all of them unless the store could not create one). Sweeps and lessons queue at
    // most most_runs_queued_at_once.
    // `groups[i]`, when given, is run i's group (RunRecord::group).
    std::vector<int> enqueue(const std::vector<RunSpec>& specs, const std::vector<QString>& names,
                             const std::vector<QString>& groups = {});
    // Queues each of `points` (named `names`) `repeats` times over seeds seed .. seed +
    // repeats - 1, in that order, each point's runs one new group when repeats > 1 (a sweep's
    // points are different experiments). repeats_problem() must have accepted every point.
    std::vector<int> enqueueRepeats(const std::vector<RunSpec>& points,
                                    const std::vector<QString>& names, int repeats);
    // Adds a run that was not started here (a finished run from elsewhere, a benchmark's data),
    // writing it to the store when there is one. Its id and colour are assigned here; returns
    // the id, 0 when the store could not take it.
    int add(RunRecord record);

    // Stops a running or queued run; it ends as cancelled. Others are ignored.
    void stop(int id);
    void stopAll();
    // Removes a run (stopping it first when active), from the store too. False when there is no
    // such run or the store could not delete it.
    bool remove(int id);
    void rename(int id, const QString& name);
    void setTags(int id, const QStringList& tags);
    // Showing a stored run loads its curves first; when they cannot be loaded it stays hidden.
    void setVisible(int id, bool visible);
    // Loads the curves of a stored run listed without them; true when they are loaded.
    bool loadCurves(int id);
    // The run others are compared with (0: none).
    void setBaseline(int id);
    int baseline() const { return baseline_; }

    // Reads what others wrote to the store since the last look (the poll timer calls this).
    void refresh();

    const RunRecord* find(int id) const;
    const std::vector<int>& ids() const { return order_; }
    // Runs queued or running.
    int activeCount() const;

  signals:
    void runAdded(int id);
    // Name, tags, state, visibility or summary figures changed.
    void runChanged(int id);
    // New points were appended to the run's curves (or its curves were loaded).
    void curvesChanged(int id);
    void runRemoved(int id);
    void baselineChanged(int id);
    // The store was replaced (setStore).
    void storeChanged();
    // Reading or writing the store failed; `message` says what and what to do.
    void storeError(const QString& message);

  private:
    RunRecord* record_for_controller_id(int controller_id);
    // Adds a record whose id is set: gives it its colour and tells the views.
    void insert(RunRecord record);
    // Takes a run out without touching the store.
    void forget(int id);
    // `name`, or when a run has it: with `spec`, `name` and what tells the run apart from that one
    // ("cnn, 2 dev × 128, lr 0.1, optimizer adam"), and "(repeat N)" after it when the
    // settings are the same; without, "name (N)".
    QString unique_name(const QString& name, const RunSpec* spec = nullptr) const;
    // "run <id>", made unique.
    QString default_name(int id) const;
    bool nameTaken(const QString& name) const;
    const RunRecord* findNamed(const QString& name) const;
    // Whether the run is queued or running on this collection's controller.
    bool runs_here(int id) const;
    // Whether the run was removed while it ran here and leaves the store once it has ended.
    bool deleting(int id) const;
    void report_store_error(const QString& what, const std::exception& error);

    // Brings the runs up to date with the store's list.
    void sync(const std::vector<StoredRun>& listed);
    // Reads the run's curves and epochs from the store; throws StoreError.
    void read_curves(RunRecord& run);
    // Appends the rows another process wrote since the run's last point; true when any was.
    bool append_new_metrics(RunRecord& run);
    // Writes a run's end when the store does not hold it (it ended before its recorder started,
    // or recording failed).
    void record_end(const RunRecord& run);

    void on_started(int controller_id, const RunInfo& info);
    void on_step(int controller_id, const StepMetrics& step);
    void on_epoch(int controller_id, const EpochMetrics& epoch);
    void on_ended(int controller_id, const RunEnd& end);

    RunController& controller_;
    std::unique_ptr<RunStore> store_;
    std::map<int, RunRecord> runs_;
    std::vector<int> order_;
    std::unordered_map<int, int> by_controller_id_;   // controller's run id -> ours
    std::unordered_map<int, int> delete_when_ended_;  // the same, for runs removed while active
    int next_id_ = 1;                                 // without a store
    int next_colour_ = 0;
    int baseline_ = 0;
    QTimer poll_timer_;
    std::int64_t seen_change_ = -1;  // the store's change counter at the last look
    QString last_poll_error_;        // reported once, not every second
};

}  // namespace scalelab
