#pragma once

#include <QDialog>

#include <vector>

#include "compare_table_model.h"

class QPushButton;
class QTableView;

namespace scalelab {

// Compare (the run table's context menu): two or more runs or groups side by side, one column
// each, the fields that differ among them over their summary figures (CompareTableModel), with
// a button that copies the table to the clipboard as CSV for a report or a spreadsheet.
class CompareDialog : public QDialog {
    Q_OBJECT

  public:
    CompareDialog(const RunCollection& runs, std::vector<ComparedRuns> compared,
                  QWidget* parent = nullptr);

    CompareTableModel& model() { return *model_; }
    QTableView& table() { return *table_; }
    QPushButton& copyButton() { return *copy_; }

  public slots:
    void copyAsCsv();

  private:
    CompareTableModel* model_ = nullptr;
    QTableView* table_ = nullptr;
    QPushButton* copy_ = nullptr;
};

}  // namespace scalelab
