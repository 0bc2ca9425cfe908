#pragma once

#include <QWidget>

#include <map>

#include "run_filter.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;

namespace scalelab {

// The bar above the run table that sets its RunFilter: a search box (plain words, or a regular
// expression with the "Regex" box ticked; an invalid one is said in red under the box), one combo
// box per configuration field listing the values the runs have, how many runs are shown while a
// filter hides some, and "What differs", which has the configuration column show only the fields
// that differ among the runs the filter lets through (RunTableModel::setOnlyDifferences).
class RunFilterBar : public QWidget {
    Q_OBJECT

  public:
    explicit RunFilterBar(RunFilter& filter, QWidget* parent = nullptr);

    QLineEdit& searchBox() { return *search_; }
    QCheckBox& regularExpressionBox() { return *regular_expression_; }
    QComboBox& fieldBox(RunFilter::Field field) { return *fields_.at(field); }
    QCheckBox& differencesBox() { return *differences_; }
    // The red message under the search box: empty while the pattern is valid.
    QString errorText() const;

  signals:
    // "What differs" was ticked or cleared.
    void onlyDifferencesToggled(bool on);

  protected:
    // Colours the error in a new theme's red.
    void changeEvent(QEvent* event) override;

  private:
    // Fills each field's box with the values the runs have now, keeping what is chosen.
    void fillFieldBoxes();
    void updateCount();
    // Tells the table model which runs the differences are among: every run listed, those
    // hidden on the charts too, since the column describes the table's rows.
    void updateDifferences();

    RunFilter& filter_;
    QLineEdit* search_ = nullptr;
    QCheckBox* regular_expression_ = nullptr;
    QCheckBox* differences_ = nullptr;
    QLabel* error_ = nullptr;
    QLabel* count_ = nullptr;
    std::map<RunFilter::Field, QComboBox*> fields_;
};

}  // namespace scalelab
