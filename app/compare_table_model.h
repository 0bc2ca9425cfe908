#pragma once

#include <QAbstractTableModel>
#include <QStringList>

#include <vector>

#include "run_group.h"

namespace scalelab {

class RunCollection;

// One column of a comparison: a run alone, or the members of a group.
struct ComparedRuns {
    QString name;  // the run's, or the group's
    std::vector<int> run_ids;
    bool group = false;
};

// Runs and groups side by side, one column each (the Compare dialog): first one row per
// experiment field whose values differ among them (fields_that_differ(), so a group's seeds
// count as its lowest), then their summary figures from group_summary(). A group's figure is the
// mean ± the standard deviation over the members that have it, with how many do when some lack
// it; a run's is its value.
//
// Text only (Qt Core), as RunTableModel. It follows the RunCollection: a running member's figures
// change as it trains, and a deleted run leaves its column (a column left empty goes).
class CompareTableModel : public QAbstractTableModel {
    Q_OBJECT

  public:
    // The figures, in their rows' order after the fields'.
    enum class Figure { Runs, BestAccuracy, TimeToTarget, StepsToTarget, ImagesPerSecond };
    static constexpr int figure_count = 5;

    CompareTableModel(const RunCollection& runs, std::vector<ComparedRuns> compared,
                      QObject* parent = nullptr);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

    // The keys of the differing fields, the first rows.
    const QStringList& fields() const { return fields_; }
    // The row of `figure`.
    int figureRow(Figure figure) const { return int(fields_.size()) + int(figure); }
    // The table as the dialog shows it, in CSV (RFC 4180): a header line ("", then each column's
    // name), then one line per row, its title first.
    QString toCsv() const;

  private:
    void update_fields();
    void on_run_changed(int id);
    void on_run_removed(int id);
    bool compares(int id) const;
    std::vector<const RunRecord*> members(const ComparedRuns& column) const;
    QString field_text(const QString& key, const ComparedRuns& column) const;
    QString figure_text(Figure figure, const ComparedRuns& column) const;

    const RunCollection& runs_;
    std::vector<ComparedRuns> compared_;
    QStringList fields_;
};

}  // namespace scalelab
