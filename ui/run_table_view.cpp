#include "run_table_view.h"

#include <QAction>
#include <QContextMenuEvent>
#include <QHeaderView>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>

#include "run_collection.h"
#include "run_status_delegate.h"
#include "run_table_model.h"
#include "run_table_style_model.h"

namespace scalelab {

RunTableView::RunTableView(RunCollection& runs, RunTableModel& model, QWidget* parent)
    : QTableView(parent),
      runs_(runs),
      model_(model),
      style_model_(new RunTableStyleModel(runs, this)) {
    style_model_->setSourceModel(&model_);
    setModel(style_model_);
    setItemDelegateForColumn(RunTableModel::StatusColumn, new RunStatusDelegate(this));

    setSelectionBehavior(SelectRows);
    setSelectionMode(SingleSelection);
    // F2 goes through the rename action, which edits the name whichever cell is current.
    setEditTriggers(DoubleClicked);
    setAlternatingRowColors(true);
    setShowGrid(false);
    setWordWrap(false);
    setCornerButtonEnabled(false);
    setIconSize(QSize(12, 12));
    verticalHeader()->hide();
    verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 12);
    horizontalHeader()->setHighlightSections(false);
    setColumnWidths();

    rename_action_ = addRunAction(tr("&Rename"), QStringLiteral("renameAction"));
    rename_action_->setShortcut(Qt::Key_F2);
    connect(rename_action_, &QAction::triggered, this, [this] { renameRun(selectedRunId()); });

    stop_action_ = addRunAction(tr("&Stop"), QStringLiteral("stopAction"));
    connect(stop_action_, &QAction::triggered, this,
            [this] { emit stopRequested(selectedRunId()); });

    baseline_action_ = addRunAction(tr("Set as &baseline"), QStringLiteral("baselineAction"));
    connect(baseline_action_, &QAction::triggered, this, [this] {
        const int id = selectedRunId();
        runs_.setBaseline(runs_.baseline() == id ? 0 : id);
    });

    new_experiment_action_ =
        addRunAction(tr("&New experiment from this run"), QStringLiteral("newExperimentAction"));
    connect(new_experiment_action_, &QAction::triggered, this,
            [this] { emit newExperimentFromRun(selectedRunId()); });

    visibility_action_ = addRunAction(tr("&Hide on charts"), QStringLiteral("visibilityAction"));
    connect(visibility_action_, &QAction::triggered, this, [this] {
        if (const RunRecord* run = runs_.find(selectedRunId()))
            runs_.setVisible(run->id, !run->visible);
    });

    delete_action_ = addRunAction(tr("&Delete..."), QStringLiteral("deleteAction"));
    delete_action_->setShortcut(QKeySequence::Delete);
    connect(delete_action_, &QAction::triggered, this, [this] { deleteRun(selectedRunId()); });

    connect(selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunTableView::updateActions);
    connect(&runs_, &RunCollection::runChanged, this, [this](int id) {
        if (id == selectedRunId())
            updateActions();
    });
    connect(&runs_, &RunCollection::baselineChanged, this, &RunTableView::updateActions);
    updateActions();
}

QAction* RunTableView::addRunAction(const QString& text, const QString& objectName) {
    auto* action = new QAction(text, this);
    action->setObjectName(objectName);
    // Only while the table itself has the focus: Delete in the name editor deletes characters.
    action->setShortcutContext(Qt::WidgetShortcut);
    addAction(action);
    return action;
}

void RunTableView::setColumnWidths() {
    const QFontMetrics metrics = fontMetrics();
    const auto fit = [&](const QString& sample) { return metrics.horizontalAdvance(sample) + 28; };
    setColumnWidth(RunTableModel::NameColumn, fit(QStringLiteral("sweep 10 (baseline)")) + 56);
    setColumnWidth(RunTableModel::StatusColumn, fit(QStringLiteral("running · 100% · ETA 10:00")));
    setColumnWidth(RunTableModel::BestAccuracyColumn, fit(QStringLiteral("0.912 (+0.013)")));
    setColumnWidth(RunTableModel::TimeToTargetColumn,
                   fit(QStringLiteral("0.90 in 41.2 s (epoch 3, −3.1 s)")));
    setColumnWidth(RunTableModel::ImagesPerSecondColumn, fit(QStringLiteral("12345 (+12%)")));
    setColumnWidth(RunTableModel::EfficiencyColumn, fit(QStringLiteral("Scaling eff.")));
    // The configuration takes what is left; its tool tip has the whole of it.
    setColumnWidth(RunTableModel::ConfigurationColumn, fit(QStringLiteral("cnn · fashion-mnist · "
                                                                          "2×128 = 256 · sgd lr")));
    horizontalHeader()->setSectionResizeMode(RunTableModel::ConfigurationColumn,
                                             QHeaderView::Stretch);
    horizontalHeader()->setMinimumSectionSize(fit(QStringLiteral("Name")));
}

int RunTableView::selectedRunId() const {
    const QModelIndexList rows = selectionModel()->selectedRows();
    return rows.isEmpty() ? 0 : rows.front().data(RunTableModel::RunIdRole).toInt();
}

void RunTableView::selectRun(int id) {
    const int row = model_.row(id);
    if (row < 0) {
        clearSelection();
        return;
    }
    selectRow(row);
}

void RunTableView::renameRun(int id) {
    const int row = model_.row(id);
    if (row < 0)
        return;
    const QModelIndex name = style_model_->index(row, RunTableModel::NameColumn);
    setCurrentIndex(name);
    edit(name);
}

void RunTableView::deleteRun(int id) {
    const RunRecord* run = runs_.find(id);
    if (run == nullptr)
        return;
    QMessageBox box(this);
    box.setIcon(QMessageBox::Warning);
    box.setWindowTitle(tr("Delete run"));
    if (is_active(run->state)) {
        box.setText(tr("“%1” is still %2. Stop it and delete it?")
                        .arg(run->name, QString::fromUtf8(to_string(run->state))));
    } else {
        box.setText(tr("Delete “%1”?").arg(run->name));
    }
    box.setInformativeText(
        tr("Its curves and figures leave this session; export them first to keep them."));
    QPushButton* remove = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
    box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == remove)
        runs_.remove(id);
}

void RunTableView::updateActions() {
    const RunRecord* run = runs_.find(selectedRunId());
    for (QAction* action : actions())
        action->setEnabled(run != nullptr);
    if (run == nullptr)
        return;
    stop_action_->setEnabled(is_active(run->state));
    baseline_action_->setText(runs_.baseline() == run->id ? tr("Clear &baseline")
                                                          : tr("Set as &baseline"));
    visibility_action_->setText(run->visible ? tr("&Hide on charts") : tr("&Show on charts"));
}

void RunTableView::contextMenuEvent(QContextMenuEvent* event) {
    const QModelIndex index = indexAt(event->pos());
    if (index.isValid())
        selectRow(index.row());
    if (selectedRunId() == 0)
        return;
    QMenu menu(this);
    menu.addAction(rename_action_);
    menu.addAction(stop_action_);
    menu.addSeparator();
    menu.addAction(baseline_action_);
    menu.addAction(new_experiment_action_);
    menu.addAction(visibility_action_);
    menu.addSeparator();
    menu.addAction(delete_action_);
    menu.exec(event->globalPos());
}

}  // namespace scalelab
