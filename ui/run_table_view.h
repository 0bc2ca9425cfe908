#pragma once

#include <QTableView>

class QAction;

namespace scalelab {

class RunCollection;
class RunTableModel;
class RunTableStyleModel;

// The run table: one row per run of a RunTableModel, the run's colour in front of its name, a
// progress bar in the status column, rows selected whole.
//
// The context menu (and the table's keyboard shortcuts: F2 renames, Delete deletes) acts on the
// selected run: rename in place, stop, delete (after asking), set or clear the baseline, start a
// new experiment from the run's settings, show or hide it on the charts. Stopping and starting a
// new experiment are the window's business and leave through signals; the rest changes the
// RunCollection directly.
class RunTableView : public QTableView {
    Q_OBJECT

  public:
    RunTableView(RunCollection& runs, RunTableModel& model, QWidget* parent = nullptr);

    // The selected run's id; 0 when none is selected.
    int selectedRunId() const;
    void selectRun(int id);

  public slots:
    // Starts editing the run's name in place.
    void renameRun(int id);
    // Asks whether to delete the run (saying so when it is still queued or running), then
    // removes it from the collection.
    void deleteRun(int id);

  signals:
    void stopRequested(int id);
    void newExperimentFromRun(int id);

  protected:
    void contextMenuEvent(QContextMenuEvent* event) override;

  private:
    QAction* addRunAction(const QString& text, const QString& objectName);
    void updateActions();
    void setColumnWidths();

    RunCollection& runs_;
    RunTableModel& model_;
    RunTableStyleModel* style_model_ = nullptr;

    QAction* rename_action_ = nullptr;
    QAction* stop_action_ = nullptr;
    QAction* delete_action_ = nullptr;
    QAction* baseline_action_ = nullptr;
    QAction* new_experiment_action_ = nullptr;
    QAction* visibility_action_ = nullptr;
};

}  // namespace scalelab
