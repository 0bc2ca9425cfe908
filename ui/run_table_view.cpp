#include "run_table_view.h"

#include <QAction>
#include <QContextMenuEvent>
#include <QHeaderView>
#include <QInputDialog>
#include <QMenu>
#include <QMessageBox>
#include <QPushButton>
#include <QSet>

#include <algorithm>
#include <utility>

#include "compare_dialog.h"
#include "run_collection.h"
#include "run_filter.h"
#include "run_status_delegate.h"
#include "run_table_model.h"
#include "run_table_style_model.h"

namespace scalelab {

RunTableView::RunTableView(RunCollection& runs, RunTableModel& model, QWidget* parent)
    : QTreeView(parent),
      runs_(runs),
      model_(model),
      filter_(new RunFilter(model, this)),
      style_model_(new RunTableStyleModel(runs, this)) {
    style_model_->setSourceModel(filter_);
    setModel(style_model_);
    setItemDelegateForColumn(RunTableModel::StatusColumn, new RunStatusDelegate(this));

    setSelectionBehavior(SelectRows);
    setSelectionMode(ExtendedSelection);
    // F2 goes through the rename action, which edits the name whichever cell is current.
    setEditTriggers(DoubleClicked);
    setAlternatingRowColors(true);
    setWordWrap(false);
    setIconSize(QSize(12, 12));
    // Every row is one line (the status delegate sets its height): the view need not measure
    // each of hundreds of rows.
    setUniformRowHeights(true);
    setAllColumnsShowFocus(true);
    // Room for the arrow that opens a group (Fusion draws it 9 px wide), and no more: the
    // key columns still fit a 1024-pixel projector's table (test_window_layout).
    setIndentation(fontMetrics().horizontalAdvance(QLatin1Char('M')));
    header()->setHighlightSections(false);
    header()->setStretchLastSection(false);
    setColumnWidths();
    setColumnHidden(RunTableModel::ConfigurationColumn, true);
    // The key figures right after the name and the status: the time to target follows them.
    header()->moveSection(header()->visualIndex(RunTableModel::TimeToTargetColumn),
                          header()->visualIndex(RunTableModel::EfficiencyColumn));
    header()->setContextMenuPolicy(Qt::CustomContextMenu);
    connect(header(), &QHeaderView::customContextMenuRequested, this, &RunTableView::chooseColumns);
    connect(&runs_, &RunCollection::runChanged, this, &RunTableView::followStartedRun);

    rename_action_ = addRunAction(tr("&Rename"), QStringLiteral("renameAction"));
    rename_action_->setShortcut(Qt::Key_F2);
    connect(rename_action_, &QAction::triggered, this, [this] { renameRun(selectedRunId()); });

    tags_action_ = addRunAction(tr("Edit &tags..."), QStringLiteral("tagsAction"));
    connect(tags_action_, &QAction::triggered, this, [this] { editTags(selectedRunId()); });

    stop_action_ = addRunAction(tr("&Stop"), QStringLiteral("stopAction"));
    connect(stop_action_, &QAction::triggered, this, [this] {
        for (const int id : selectedRunIds())
            if (const RunRecord* run = runs_.find(id); run != nullptr && is_active(run->state))
                emit stopRequested(id);
    });

    baseline_action_ = addRunAction(tr("Set as &baseline"), QStringLiteral("baselineAction"));
    connect(baseline_action_, &QAction::triggered, this, [this] {
        const int id = selectedRunId();
        runs_.setBaseline(runs_.baseline() == id ? 0 : id);
    });

    new_experiment_action_ =
        addRunAction(tr("&New experiment from this run"), QStringLiteral("newExperimentAction"));
    connect(new_experiment_action_, &QAction::triggered, this,
            [this] { emit newExperimentFromRun(selectedRunId()); });

    pytorch_export_action_ =
        addRunAction(tr("Export as &PyTorch script..."), QStringLiteral("runPytorchExportAction"));
    connect(pytorch_export_action_, &QAction::triggered, this,
            [this] { emit pytorchExportRequested(selectedRunId()); });

    compare_action_ = addRunAction(tr("&Compare..."), QStringLiteral("compareAction"));
    connect(compare_action_, &QAction::triggered, this, &RunTableView::compareSelected);

    visibility_action_ = addRunAction(tr("&Hide on charts"), QStringLiteral("visibilityAction"));
    connect(visibility_action_, &QAction::triggered, this, [this] {
        const std::vector<int> ids = selectedRunIds();
        // Shows them all when any is hidden, so that one click makes the selection consistent.
        const bool show = std::any_of(ids.begin(), ids.end(), [this](int id) {
            const RunRecord* run = runs_.find(id);
            return run != nullptr && !run->visible;
        });
        for (const int id : ids)
            runs_.setVisible(id, show);
    });

    delete_action_ = addRunAction(tr("&Delete..."), QStringLiteral("deleteAction"));
    delete_action_->setShortcut(QKeySequence::Delete);
    connect(delete_action_, &QAction::triggered, this, [this] { deleteRuns(selectedRunIds()); });

    connect(selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &RunTableView::updateActions);
    connect(&runs_, &RunCollection::runChanged, this, [this](int id) {
        const std::vector<int> selected = selectedRunIds();
        if (std::find(selected.begin(), selected.end(), id) != selected.end())
            updateActions();
    });
    connect(&runs_, &RunCollection::baselineChanged, this, &RunTableView::updateActions);
    for (const auto signal :
         {&RunCollection::runAdded, &RunCollection::runChanged, &RunCollection::runRemoved})
        connect(&runs_, signal, this, &RunTableView::updateTagsColumn);
    updateActions();
    updateTagsColumn();
}

void RunTableView::updateTagsColumn() {
    const std::vector<int>& ids = runs_.ids();
    const bool tagged = std::any_of(ids.begin(), ids.end(),
                                    [this](int id) { return !runs_.find(id)->tags.isEmpty(); });
    setColumnHidden(RunTableModel::TagsColumn, !tagged);
}

void RunTableView::chooseColumns(const QPoint& at) {
    QMenu menu(this);
    for (int column = 0; column < model()->columnCount(); ++column) {
        if (column == RunTableModel::NameColumn)
            continue;
        QAction* shown = menu.addAction(model()->headerData(column, Qt::Horizontal).toString());
        shown->setCheckable(true);
        shown->setChecked(!isColumnHidden(column));
        connect(shown, &QAction::toggled, this,
                [this, column](bool on) { setColumnHidden(column, !on); });
    }
    menu.exec(header()->mapToGlobal(at));
}

QByteArray RunTableView::saveColumns() const {
    return header()->saveState();
}

bool RunTableView::restoreColumns(const QByteArray& state) {
    return header()->restoreState(state);
}

void RunTableView::followStartedRun(int id) {
    const RunRecord* run = runs_.find(id);
    if (run == nullptr || run->state != RunState::Running || !followed_.insert(id).second)
        return;
    QModelIndex row = indexOfRun(id, RunTableModel::NameColumn);
    // A run of a closed group: its group's row, rather than opening the group.
    if (row.parent().isValid() && !isExpanded(row.parent()))
        row = row.parent();
    if (row.isValid())
        scrollTo(row);
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
    setColumnWidth(RunTableModel::NameColumn,
                   fit(QStringLiteral("sweep 10 (baseline)")) + 24 + indentation());
    setColumnWidth(RunTableModel::TagsColumn, fit(QStringLiteral("week 2, lars")));
    // The status is elided past this; its tool tip has the whole message.
    setColumnWidth(RunTableModel::StatusColumn, fit(QStringLiteral("running · 100%")));
    // A group's spread ("0.897 ± 0.003") is as wide as a run's difference to the baseline.
    setColumnWidth(RunTableModel::BestAccuracyColumn, fit(QStringLiteral("0.912 (+0.013)")));
    setColumnWidth(RunTableModel::TimeToTargetColumn,
                   fit(QStringLiteral("0.90 in 41.2 s (epoch 3, −3.1 s)")));
    setColumnWidth(RunTableModel::ImagesPerSecondColumn, fit(QStringLiteral("12345 (+12%)")));
    setColumnWidth(RunTableModel::EfficiencyColumn, fit(QStringLiteral("Scaling eff.")));
    // One note fits; the tool tip lists them all.
    setColumnWidth(RunTableModel::NotesColumn,
                   fit(QStringLiteral("reached 0.90 at epoch 3 (41 s)")));
    // The configuration takes what is left; its tool tip has the whole of it.
    setColumnWidth(RunTableModel::ConfigurationColumn, fit(QStringLiteral("cnn · fashion-mnist · "
                                                                          "2×128 = 256 · sgd lr")));
    header()->setSectionResizeMode(RunTableModel::ConfigurationColumn, QHeaderView::Stretch);
    header()->setMinimumSectionSize(fit(QStringLiteral("Name")));
}

QModelIndex RunTableView::indexOfRun(int id, int column) const {
    return style_model_->mapFromSource(filter_->mapFromSource(model_.indexOfRun(id, column)));
}

int RunTableView::selectedRunId() const {
    const QModelIndexList rows = selectionModel()->selectedRows();
    if (rows.isEmpty())
        return 0;
    const QModelIndex current = currentIndex();
    const bool current_selected =
        current.isValid() && selectionModel()->isRowSelected(current.row(), current.parent());
    // A group's row stands for its runs: the first of them here.
    const QList<int> ids = (current_selected ? current : rows.front())
                               .data(RunTableModel::RunIdsRole)
                               .value<QList<int>>();
    return ids.isEmpty() ? 0 : ids.front();
}

std::vector<int> RunTableView::selectedRunIds() const {
    QModelIndexList rows = selectionModel()->selectedRows();
    // Table order: a group's runs right after the rows before the group.
    const auto place = [](const QModelIndex& row) {
        return row.parent().isValid() ? std::pair(row.parent().row(), row.row())
                                      : std::pair(row.row(), -1);
    };
    std::sort(rows.begin(), rows.end(),
              [&](const QModelIndex& a, const QModelIndex& b) { return place(a) < place(b); });
    std::vector<int> ids;
    for (const QModelIndex& row : rows)
        // A run selected with its group counts once.
        for (const int id : row.data(RunTableModel::RunIdsRole).value<QList<int>>())
            if (std::find(ids.begin(), ids.end(), id) == ids.end())
                ids.push_back(id);
    return ids;
}

void RunTableView::selectRun(int id) {
    selectRuns({id});
}

void RunTableView::selectRuns(const std::vector<int>& ids) {
    QItemSelection selection;
    for (const int id : ids)
        if (const QModelIndex index = indexOfRun(id, RunTableModel::NameColumn); index.isValid()) {
            if (index.parent().isValid())
                expand(index.parent());
            selection.select(index, index);
        }
    selectionModel()->select(selection,
                             QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (!selection.isEmpty())
        selectionModel()->setCurrentIndex(selection.indexes().front(),
                                          QItemSelectionModel::NoUpdate);
}

void RunTableView::renameRun(int id) {
    const QModelIndex name = indexOfRun(id, RunTableModel::NameColumn);
    if (!name.isValid())
        return;
    setCurrentIndex(name);
    edit(name);
}

void RunTableView::editTags(int id) {
    const RunRecord* run = runs_.find(id);
    if (run == nullptr)
        return;
    bool ok = false;
    const QString text = QInputDialog::getText(
        this, tr("Edit tags"), tr("Tags of “%1”, separated by commas:").arg(run->name),
        QLineEdit::Normal, run->tags.join(QStringLiteral(", ")), &ok);
    if (ok)
        runs_.setTags(id, text.split(QLatin1Char(','), Qt::SkipEmptyParts));
}

void RunTableView::deleteRuns(const std::vector<int>& ids) {
    std::vector<const RunRecord*> runs;
    for (const int id : ids)
        if (const RunRecord* run = runs_.find(id))
            runs.push_back(run);
    if (runs.empty())
        return;
    const auto active = std::count_if(runs.begin(), runs.end(),
                                      [](const RunRecord* run) { return is_active(run->state); });
    QMessageBox box(this);
    box.setIcon(QMessageBox::Warning);
    box.setWindowTitle(runs.size() == 1 ? tr("Delete run") : tr("Delete runs"));
    if (runs.size() > 1) {
        QString text = tr("Delete these %n runs?", nullptr, int(runs.size()));
        if (active > 0)
            text += QLatin1Char(' ') +
                    tr("%n of them are still queued or running: they are stopped first.", nullptr,
                       int(active));
        box.setText(text);
    } else if (is_active(runs.front()->state)) {
        box.setText(
            tr("“%1” is still %2. Stop it and delete it?")
                .arg(runs.front()->name, QString::fromUtf8(to_string(runs.front()->state))));
    } else {
        box.setText(tr("Delete “%1”?").arg(runs.front()->name));
    }
    box.setInformativeText(
        runs_.store() != nullptr
            ? tr("They are deleted from the run store for good; export them first (File ▸ Export "
                 "Selected Runs) to keep a copy.")
            : tr("Their curves and figures leave this session; export them first to keep them."));
    QPushButton* remove = box.addButton(tr("Delete"), QMessageBox::DestructiveRole);
    box.addButton(QMessageBox::Cancel);
    box.setDefaultButton(QMessageBox::Cancel);
    box.exec();
    if (box.clickedButton() == remove)
        for (const int id : ids)
            runs_.remove(id);
}

std::vector<ComparedRuns> RunTableView::selectedForComparison() const {
    QModelIndexList rows = selectionModel()->selectedRows(RunTableModel::NameColumn);
    // Top to bottom as shown, which also orders a group's runs among other rows.
    std::sort(rows.begin(), rows.end(), [this](const QModelIndex& a, const QModelIndex& b) {
        return visualRect(a).top() < visualRect(b).top();
    });
    // A run selected with its own group's row is compared as part of the group, not twice.
    QSet<QString> groups;
    for (const QModelIndex& row : rows)
        groups.insert(row.data(RunTableModel::GroupRole).toString());
    std::vector<ComparedRuns> compared;
    for (const QModelIndex& row : rows) {
        if (const QString group = row.data(RunTableModel::GroupRole).toString(); !group.isEmpty()) {
            const QList<int> ids = row.data(RunTableModel::RunIdsRole).value<QList<int>>();
            compared.push_back({row.data().toString(), {ids.begin(), ids.end()}, true});
        } else if (const RunRecord* run = runs_.find(row.data(RunTableModel::RunIdRole).toInt());
                   run != nullptr && (run->group.isEmpty() || !groups.contains(run->group))) {
            compared.push_back({run->name, {run->id}, false});
        }
    }
    return compared;
}

void RunTableView::compareSelected() {
    std::vector<ComparedRuns> compared = selectedForComparison();
    if (compared.size() < 2)
        return;
    CompareDialog dialog(runs_, std::move(compared), this);
    dialog.exec();
}

void RunTableView::updateActions() {
    const std::vector<int> ids = selectedRunIds();
    for (QAction* action : actions())
        action->setEnabled(!ids.empty());
    if (ids.empty())
        return;
    const bool one = ids.size() == 1;
    for (QAction* single : {rename_action_, tags_action_, baseline_action_, new_experiment_action_,
                            pytorch_export_action_})
        single->setEnabled(one);
    const auto any = [&](auto&& test) {
        return std::any_of(ids.begin(), ids.end(), [&](int id) {
            const RunRecord* run = runs_.find(id);
            return run != nullptr && test(*run);
        });
    };
    compare_action_->setEnabled(selectedForComparison().size() >= 2);
    stop_action_->setEnabled(any([](const RunRecord& run) { return is_active(run.state); }));
    baseline_action_->setText(runs_.baseline() == ids.front() && one ? tr("Clear &baseline")
                                                                     : tr("Set as &baseline"));
    visibility_action_->setText(any([](const RunRecord& run) { return !run.visible; })
                                    ? tr("&Show on charts")
                                    : tr("&Hide on charts"));
}

void RunTableView::contextMenuEvent(QContextMenuEvent* event) {
    // A right click on a selected row keeps the selection (to act on all of it); on another
    // row it selects that row.
    const QModelIndex index = indexAt(event->pos());
    if (index.isValid() && !selectionModel()->isRowSelected(index.row(), index.parent()))
        selectionModel()->setCurrentIndex(
            index, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    if (selectedRunIds().empty())
        return;
    QMenu menu(this);
    menu.addAction(rename_action_);
    menu.addAction(tags_action_);
    menu.addAction(stop_action_);
    menu.addSeparator();
    menu.addAction(baseline_action_);
    menu.addAction(new_experiment_action_);
    menu.addAction(pytorch_export_action_);
    menu.addAction(compare_action_);
    menu.addAction(visibility_action_);
    menu.addSeparator();
    menu.addAction(delete_action_);
    menu.exec(event->globalPos());
}

}  // namespace scalelab
