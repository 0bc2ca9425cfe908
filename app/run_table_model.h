#pragma once

#include <QAbstractTableModel>
#include <QTimer>

#include <set>
#include <vector>

#include "run_collection.h"

namespace scalelab {

// The runs of a RunCollection as a table: one row per run in RunCollection::ids() order.
//
// Text only (Qt Core): colours, icons and fonts are added in ui/ by a proxy model, so that the
// app layer stays free of Qt GUI types. When the collection has a baseline run, the other rows
// show their best validation accuracy, time to target and images/s with the difference to it.
//
// A running run reports every training step; the model collects the changed rows and tells the
// views about them at most five times a second, so a fast run does not keep the view repainting.
class RunTableModel : public QAbstractTableModel {
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
        RunIdRole = Qt::UserRole + 1,  // int
        ProgressRole,                  // double, the fraction of the run's steps done, 0..1
        StateRole,                     // int, a RunState
        BaselineRole,                  // bool, the run is the collection's baseline
    };
    // The longest a changed row waits before the views hear of it.
    static constexpr int update_interval_ms = 200;

    explicit RunTableModel(RunCollection& runs, QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    // The name is editable (renames the run; a blank name is refused) and checkable (shows or
    // hides the run on the charts); the tags are editable as one comma-separated list.
    bool setData(const QModelIndex& index, const QVariant& value, int role = Qt::EditRole) override;
    Qt::ItemFlags flags(const QModelIndex& index) const override;
    QHash<int, QByteArray> roleNames() const override;

    // The run in `row`, 0 when out of range; and the row of run `id`, -1 when not shown.
    int runId(int row) const;
    int row(int id) const;

    RunCollection& runs() const { return runs_; }

  private:
    void on_run_added(int id);
    void on_run_removed(int id);
    void mark_dirty(int id);
    void emit_dirty_rows();
    void emit_all_rows_changed();

    QVariant display(const RunRecord& run, int column) const;
    QVariant tool_tip(const RunRecord& run, int column) const;
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
    std::vector<int> rows_;  // run ids, as the views know them
    std::set<int> dirty_;    // runs changed since the views last heard
    QTimer update_timer_;
};

}  // namespace scalelab
