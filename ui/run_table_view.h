#pragma once

#include <QTreeView>

#include <set>
#include <vector>

class QAction;

namespace scalelab {

class RunCollection;
class RunFilter;
class RunTableModel;
class RunTableStyleModel;
struct ComparedRuns;

// The run table: one row per run of a RunTableModel that its RunFilter lets through, and one per
// group of repeats, collapsed at first, that opens onto its runs; the run's colour in front of its
// name, a progress bar in the status column, rows selected whole (one or several; a group's row
// stands for all its runs). The tags column is shown while some run has tags. The key columns
// (name, status, best accuracy, images/s, scaling efficiency) come first in view; the configuration
// column is hidden at first (every cell's tooltip has the configuration) and the header's context
// menu shows or hides any column but the name. A run that starts is scrolled into view.
//
// The context menu (and the table's keyboard shortcuts: F2 renames, Delete deletes) acts on the
// selected runs: rename in place, edit tags, set or clear the baseline and start a new
// experiment from the run's settings (one run); compare (two or more: CompareDialog); stop, show
// or hide on the charts, delete (after asking) (every selected run, every run of a selected group).
// Stopping and starting a new experiment are the window's business and leave through signals; the
// rest changes the RunCollection directly.
class RunTableView : public QTreeView {
    Q_OBJECT

  public:
    RunTableView(RunCollection& runs, RunTableModel& model, QWidget* parent = nullptr);

    // The rows shown: set it to filter the table (the window's filter bar does).
    RunFilter& filter() { return *filter_; }

    // The selected run's id (the current one when several are selected); 0 when none is.
    int selectedRunId() const;
    // Every selected run's id, in table order; a selected group's are all its runs'.
    std::vector<int> selectedRunIds() const;
    // Selects this run alone, opening its group; clears the selection when it is not shown.
    void selectRun(int id);
    void selectRuns(const std::vector<int>& ids);

    // The columns the user chose to show and their widths and order, for the window's settings;
    // restoreColumns() takes them back (false, changing nothing, for bytes it cannot read).
    QByteArray saveColumns() const;
    bool restoreColumns(const QByteArray& state);

  public slots:
    // Starts editing the run's name in place.
    void renameRun(int id);
    // Asks for the run's tags, separated by commas.
    void editTags(int id);
    // Asks whether to delete the runs (saying so when one is still queued or running, and
    // whether they leave the run store), then removes them from the collection.
    void deleteRuns(const std::vector<int>& ids);
    void deleteRun(int id) { deleteRuns({id}); }
    // Shows the selected runs side by side in a CompareDialog.
    void compareSelected();

  signals:
    void stopRequested(int id);
    void newExperimentFromRun(int id);
    void pytorchExportRequested(int id);

  protected:
    void contextMenuEvent(QContextMenuEvent* event) override;

  private slots:
    // The header's menu: a check box for each column but the name.
    void chooseColumns(const QPoint& at);
    // Scrolls to a run when it starts, so that a sweep adding rows below stays followed.
    void followStartedRun(int id);

  private:
    QAction* addRunAction(const QString& text, const QString& objectName);
    void updateActions();
    // The selected rows as the Compare dialog's columns, in table order.
    std::vector<ComparedRuns> selectedForComparison() const;
    // The tags column takes room only while some run has tags.
    void updateTagsColumn();
    void setColumnWidths();
    // The view's index of run `id` in `column`; invalid when the filter hides it.
    QModelIndex indexOfRun(int id, int column) const;

    RunCollection& runs_;
    RunTableModel& model_;
    RunFilter* filter_ = nullptr;
    RunTableStyleModel* style_model_ = nullptr;
    std::set<int> followed_;  // runs scrolled to when they started, each once

    QAction* rename_action_ = nullptr;
    QAction* tags_action_ = nullptr;
    QAction* stop_action_ = nullptr;
    QAction* delete_action_ = nullptr;
    QAction* baseline_action_ = nullptr;
    QAction* new_experiment_action_ = nullptr;
    QAction* pytorch_export_action_ = nullptr;
    QAction* visibility_action_ = nullptr;
    QAction* compare_action_ = nullptr;
};

}  // namespace scalelab
