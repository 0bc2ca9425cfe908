#pragma once

#include <QAbstractItemModel>
#include <QTimer>

#include <set>
#include <vector>

#include "run_collection.h"
#include "run_group.h"

namespace scalelab {

// The runs of a RunCollection as a tree of rows: one top-level row per run that stands alone
// and one per group of repeats (RunRecord::group), in the order of their (first) run in
// RunCollection::ids(); a group's row has its runs as children, in the same order. A group's row
// shows its runs' spread ("0.897 ± 0.003"), how they ended ("5 runs: 4 finished, 1 diverged":
// every member counted, however it ended) and, in its Notes, whether its mean differs from
// another group's by no more than seed noise (run_group.h, docs/repeats.md).
//
// Text only (Qt Core): colours, icons and fonts are added in ui/ by a proxy model, so that the
// app layer stays free of Qt GUI types. When the collection has a baseline run, the other rows
// show their best validation accuracy, time to target and images/s with the difference to it
// (a group's row does not: its Notes compare it with another group).
//
// A running run reports every training step; the model collects the changed rows and tells the
// views about them at most five times a second, so a fast run does not keep the view repainting.
class RunTableModel : public QAbstractItemModel {
    Q_OBJECT

  public:
    enum Column {
        NameColumn,
        TagsColumn,
        ConfigurationColumn,
        StatusColumn,
        BestAccuracyColumn,
        TimeToTargetColumn,
        ImagesPerSecondColumn,
        EfficiencyColumn,
        NotesColumn,  // run_annotations(): divergence, targets reached, ...
        ColumnCount
    };
    enum Role {
        RunIdRole = Qt::UserRole + 1,  // int; 0 on a group's row
        ProgressRole,                  // double, the fraction of the run's steps done, 0..1
        StateRole,                     // int, a RunState (a group's: group_state())
        BaselineRole,                  // bool, the run is (a group: has) the collection's baseline
        RunIdsRole,                    // QList<int>: the run, or every run of the group
        GroupRole,                     // QString: the group of a group's row; empty on a run's
    };
    // The longest a changed row waits before the views hear of it.
    static constexpr int update_interval_ms = 200;

    explicit RunTableModel(RunCollection& runs, QObject* parent = nullptr);

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    // The name is editable (renames the run; a blank name is refused) and checkable (shows or
    // hides the run on the charts; a group's shows or hides all its runs); the tags are editable
    // as one comma-separated list. A group's row is not editable.
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QHash<int, QByteArray> roleNames() const override;

    // The run of a row, 0 for a group's row or an invalid index; and the index of run `id`
    // (a member's is its group's row's child), invalid when not shown.
    int runId(const QModelIndex& index) const;
    QModelIndex indexOfRun(int id, int column = 0) const;
    // The summary of a group shown in the table; null when none is.
    const GroupSummary* groupSummary(const QString& group) const;

    RunCollection& runs() const { return runs_; }

    // While on, the configuration column and its tooltip show only the fields whose values
    // differ among the runs `among` (the runs the table lists: fields_that_differ()) rather
    // than the whole configuration.
    void setOnlyDifferences(bool on, const std::vector<int>& among = {});
    bool onlyDifferences() const { return only_differences_; }

  private:
    // A top-level row: a run on its own, or a group of repeats with its runs.
    struct Row {
        int run = 0;  // 0 for a group
        QString group{};
        std::vector<int> members{};  // RunCollection order
        quintptr key = 0;            // a group's members' internalId(), never reused
    };
    // Where a run is: its top-level row, and its place among the group's members (-1: none).
    struct Place {
        int row = -1;
        int member = -1;
    };

    void on_run_added(int id);
    void on_run_removed(int id);
    void mark_dirty(int id);
    void emit_dirty_rows();
    void emit_all_rows_changed();
    void emit_row_changed(const QModelIndex& index);
    Place place(int id) const;
    int group_row(const QString& group) const;
    // The group whose row `index` is; null for a run's row.
    const Row* group_at(const QModelIndex& index) const;
    std::vector<const RunRecord*> members(const Row& group) const;

    QVariant group_data(const Row& group, int column, int role) const;
    QVariant group_display(const Row& group, const GroupSummary& summary, int column) const;
    QVariant group_tool_tip(const Row& group, const GroupSummary& summary, int column) const;
    // The group of the collection's baseline run; empty when there is none or it stands alone.
    QString baseline_group() const;
    // The state a group's status is drawn in: running while a member runs; else a member's
    // failure, divergence or interruption when there is one; else the first member's state.
    RunState group_state(const Row& group) const;

    QVariant display(const RunRecord& run, int column) const;
    QVariant tool_tip(const RunRecord& run, int column) const;
    QString configuration_text(const RunRecord& run) const;
    QString differences_tool_tip(const RunRecord& run) const;
    QString status_text(const RunRecord& run) const;
    QString best_accuracy_text(const RunRecord& run, const RunRecord* baseline) const;
    QString time_to_target_text(const RunRecord& run, const RunRecord* baseline) const;
    QString images_per_s_text(const RunRecord& run, const RunRecord* baseline) const;
    QString efficiency_text(const RunRecord& run) const;
    static QStringList notes(const RunRecord& run);
    // The figures, right-aligned to line up their digits.
    static bool is_numeric(int column);
    // The baseline run to compare `run` with; null when there is none or `run` is it.
    const RunRecord* baseline_for(const RunRecord& run) const;

    RunCollection& runs_;
    std::vector<Row> rows_;  // the top-level rows, as the views know them
    quintptr next_key_ = 1;  // 0 is the top-level rows' internalId()
    std::set<int> dirty_;    // runs changed since the views last heard
    // Every group's summary, made again when a run is added, removed or changed.
    mutable std::vector<GroupSummary> summaries_;
    mutable bool summaries_stale_ = true;
    QTimer update_timer_;
    bool only_differences_ = false;
    QStringList differences_;  // the keys of the fields that differ, while only_differences_
};

}  // namespace scalelab
