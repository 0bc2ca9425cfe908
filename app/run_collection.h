#pragma once

#include <QObject>
#include <QString>

#include <map>
#include <unordered_map>
#include <vector>

#include "run_controller.h"
#include "run_record.h"

namespace scalelab {

// The runs of this session and their whole curves, kept on the GUI thread. It starts runs
// through a RunController and turns the controller's queued signals into records; views (run
// table, charts, scaling view) read records from here and listen to the signals below.
//
// Invariants: a run's id never changes and is never reused; ids() lists runs in the order they
// were added; a record's colour is fixed when it is added; no two runs share a name when added
// (a repeated name gets " (2)", " (3)", ...). Every method runs on the thread the
// collection lives in, and so does every signal (the controller's are queued to it).
class RunCollection : public QObject {
    Q_OBJECT

  public:
    explicit RunCollection(RunController& controller, QObject* parent = nullptr);

    // Queues one run (named `name`, or "run <id>") and returns its id.
    int start(const RunSpec& spec, const QString& name = {});
    // Queues runs to run one after another in this order (a sweep); returns their ids.
    std::vector<int> enqueue(const std::vector<RunSpec>& specs, const std::vector<QString>& names);
    // Adds a run that was not started here (a finished run from elsewhere, a benchmark's data).
    // Its id and colour are assigned here; returns the id.
    int add(RunRecord record);

    // Stops a running or queued run; it ends as cancelled. Others are ignored.
    void stop(int id);
    void stopAll();
    // Removes a run (stopping it first when active). False when there is no such run.
    bool remove(int id);
    void rename(int id, const QString& name);
    void setVisible(int id, bool visible);
    // The run others are compared with (0: none).
    void setBaseline(int id);
    int baseline() const { return baseline_; }

    const RunRecord* find(int id) const;
    const std::vector<int>& ids() const { return order_; }
    // Runs queued or running.
    int activeCount() const;

  signals:
    void runAdded(int id);
    // Name, state, visibility or summary figures changed.
    void runChanged(int id);
    // New points were appended to the run's curves.
    void curvesChanged(int id);
    void runRemoved(int id);
    void baselineChanged(int id);

  private:
    RunRecord* record_for_controller_id(int controller_id);
    int insert(RunRecord record);
    bool nameTaken(const QString& name) const;
    void on_started(int controller_id, const RunInfo& info);
    void on_step(int controller_id, const StepMetrics& step);
    void on_epoch(int controller_id, const EpochMetrics& epoch);
    void on_ended(int controller_id, const RunEnd& end);

    RunController& controller_;
    std::map<int, RunRecord> runs_;
    std::vector<int> order_;
    std::unordered_map<int, int> by_controller_id_;  // controller's run id -> ours
    int next_id_ = 1;
    int next_colour_ = 0;
    int baseline_ = 0;
};

}  // namespace scalelab
