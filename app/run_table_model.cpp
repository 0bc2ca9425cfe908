#include "run_table_model.h"

#include <QLocale>

#include <algorithm>
#include <cmath>

#include "run_annotations.h"
#include "run_comparison.h"
#include "run_summary.h"

namespace scalelab {

namespace {

const QString no_value = QStringLiteral("—");
const QString minus_sign = QStringLiteral("−");

// "+0.013", "−3.1": a difference to the baseline, always signed.
QString signed_number(double value, int decimals) {
    const QString magnitude = QString::number(std::abs(value), 'f', decimals);
    return (value < 0 ? minus_sign : QStringLiteral("+")) + magnitude;
}

QString seconds_cell_text(double seconds) {
    return QStringLiteral("%1 s").arg(seconds, 0, 'f', seconds < 100 ? 1 : 0);
}

QString run_info_text(const RunInfo& info) {
    QString text = QStringLiteral(
                       "%1 device(s) × %2 thread(s) on %3 core(s) · global batch %4 · "
                       "%5 steps per epoch · %6 parameters")
                       .arg(info.devices)
                       .arg(info.threads_per_device)
                       .arg(info.cores)
                       .arg(info.global_batch)
                       .arg(info.steps_per_epoch)
                       .arg(QLocale(QLocale::English).toString(qulonglong(info.parameters)));
    for (const std::string& warning : info.warnings)
        text += QStringLiteral("\nWarning: %1").arg(QString::fromStdString(warning));
    return text;
}

}  // namespace

RunTableModel::RunTableModel(RunCollection& runs, QObject* parent)
    : QAbstractTableModel(parent), runs_(runs), rows_(runs.ids()) {
    update_timer_.setSingleShot(true);
    update_timer_.setInterval(update_interval_ms);
    connect(&update_timer_, &QTimer::timeout, this, &RunTableModel::emit_dirty_rows);
    connect(&runs_, &RunCollection::runAdded, this, &RunTableModel::on_run_added);
    connect(&runs_, &RunCollection::runRemoved, this, &RunTableModel::on_run_removed);
    connect(&runs_, &RunCollection::runChanged, this, &RunTableModel::mark_dirty);
    connect(&runs_, &RunCollection::curvesChanged, this, &RunTableModel::mark_dirty);
    // Every other row's deltas change with the baseline: rare, and shown at once.
    connect(&runs_, &RunCollection::baselineChanged, this, &RunTableModel::emit_all_rows_changed);
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(rows_.size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

int RunTableModel::runId(int row) const {
    return row >= 0 && row < int(rows_.size()) ? rows_[std::size_t(row)] : 0;
}

int RunTableModel::row(int id) const {
    const auto it = std::find(rows_.begin(), rows_.end(), id);
    return it == rows_.end() ? -1 : int(it - rows_.begin());
}

void RunTableModel::on_run_added(int id) {
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    rows_.push_back(id);
    endInsertRows();
}

void RunTableModel::on_run_removed(int id) {
    const int removed = row(id);
    if (removed < 0)
        return;
    beginRemoveRows({}, removed, removed);
    rows_.erase(rows_.begin() + removed);
    endRemoveRows();
    dirty_.erase(id);
}

void RunTableModel::mark_dirty(int id) {
    dirty_.insert(id);
    if (!update_timer_.isActive())
        update_timer_.start();
}

void RunTableModel::emit_dirty_rows() {
    int first = int(rows_.size());
    int last = -1;
    // A baseline's figures are in every row's deltas, and a 1-device run's images/s in the
    // scaling efficiency of its multi-device twins.
    bool others_depend = false;
    for (int id : dirty_) {
        const int changed = row(id);
        if (changed < 0)
            continue;
        first = std::min(first, changed);
        last = std::max(last, changed);
        const RunRecord* run = runs_.find(id);
        others_depend |= id == runs_.baseline() || (run != nullptr && run->spec.devices == 1);
    }
    dirty_.clear();
    if (last < 0)
        return;
    if (others_depend)
        emit_all_rows_changed();
    else
        emit dataChanged(index(first, 0), index(last, ColumnCount - 1));
}

void RunTableModel::emit_all_rows_changed() {
    if (!rows_.empty())
        emit dataChanged(index(0, 0), index(int(rows_.size()) - 1, ColumnCount - 1));
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    // Null between a run's removal and the runRemoved signal reaching this model.
    const RunRecord* run = runs_.find(runId(index.row()));
    if (run == nullptr)
        return {};
    const int column = index.column();
    switch (role) {
        case Qt::DisplayRole:
            return display(*run, column);
        case Qt::EditRole:
            return column == NameColumn ? QVariant(run->name) : display(*run, column);
        case Qt::CheckStateRole:
            if (column == NameColumn)
                return run->visible ? Qt::Checked : Qt::Unchecked;
            return {};
        case Qt::ToolTipRole:
            return tool_tip(*run, column);
        case Qt::TextAlignmentRole:
            return int((is_numeric(column) ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
        case RunIdRole:
            return run->id;
        case ProgressRole:
            return run->progress();
        case StateRole:
            return int(run->state);
        case BaselineRole:
            return run->id == runs_.baseline();
        default:
            return {};
    }
}

QVariant RunTableModel::display(const RunRecord& run, int column) const {
    const RunRecord* baseline = baseline_for(run);
    switch (column) {
        case NameColumn:
            return run.id == runs_.baseline() ? tr("%1 (baseline)").arg(run.name) : run.name;
        case TagsColumn:
            return run.tags.join(QStringLiteral(", "));
        case ConfigurationColumn:
            return configuration_summary(run.spec);
        case StatusColumn:
            return status_text(run);
        case BestAccuracyColumn:
            return best_accuracy_text(run, baseline);
        case TimeToTargetColumn:
            return time_to_target_text(run, baseline);
        case ImagesPerSecondColumn:
            return images_per_s_text(run, baseline);
        case EfficiencyColumn:
            return efficiency_text(run);
        case NotesColumn:
            return notes(run).join(QStringLiteral("; "));
        default:
            return {};
    }
}

QVariant RunTableModel::tool_tip(const RunRecord& run, int column) const {
    if (column == StatusColumn && !run.message.isEmpty())
        return run.message;
    if (column == EfficiencyColumn)
        if (const std::optional<ScalingEfficiency> efficiency = scaling_efficiency(runs_, run.id))
            return efficiency->explanation;
    if (column == ImagesPerSecondColumn)
        if (const RunRecord* baseline = baseline_for(run);
            baseline != nullptr && run.started && !same_device_unit(run, *baseline))
            return tr("Not compared with the baseline “%1”: its devices are not the same unit "
                      "(%2 thread(s) per device on %3 core(s), this run %4 on %5)")
                .arg(baseline->name)
                .arg(baseline->info.threads_per_device)
                .arg(baseline->info.cores)
                .arg(run.info.threads_per_device)
                .arg(run.info.cores);
    if (column == NotesColumn) {
        const QStringList lines = notes(run);
        if (!lines.isEmpty())
            return lines.join(QLatin1Char('\n'));
    }
    QString text = configuration_summary(run.spec);
    if (!run.tags.isEmpty())
        text += tr("\nTags: %1").arg(run.tags.join(QStringLiteral(", ")));
    if (run.started)
        text += QStringLiteral("\n") + run_info_text(run.info);
    const QString settings = non_default_settings(run.spec);
    if (!settings.isEmpty())
        text += tr("\n\nSettings other than the defaults:\n%1").arg(settings);
    return text;
}

QString RunTableModel::status_text(const RunRecord& run) const {
    switch (run.state) {
        case RunState::Queued:
            return tr("queued");
        case RunState::Running: {
            if (!run.started)
                return tr("starting");
            QString text = tr("running · %1%").arg(int(std::floor(run.progress() * 100.0)));
            if (const std::optional<double> eta = run.eta_seconds())
                text += tr(" · ETA %1").arg(duration_text(*eta));
            return text;
        }
        case RunState::Finished:
        case RunState::ReachedTarget:
        case RunState::Diverged:
        case RunState::Cancelled:
        case RunState::Failed:
        case RunState::Interrupted:
            break;
    }
    const QString state = QString::fromUtf8(to_string(run.state));
    return run.message.isEmpty() ? state : QStringLiteral("%1: %2").arg(state, run.message);
}

QString RunTableModel::best_accuracy_text(const RunRecord& run, const RunRecord* baseline) const {
    const std::optional<double> best = run.best_val_accuracy();
    if (!best)
        return no_value;
    QString text = QString::number(*best, 'f', 3);
    if (baseline != nullptr)
        if (const std::optional<double> reference = baseline->best_val_accuracy())
            text += QStringLiteral(" (%1)").arg(signed_number(*best - *reference, 3));
    return text;
}

QString RunTableModel::time_to_target_text(const RunRecord& run, const RunRecord* baseline) const {
    const std::optional<TargetReached> reached = run.time_to_target();
    if (!reached)
        return no_value;
    QString detail = tr("epoch %1").arg(reached->epoch);
    // Times to different targets do not compare.
    if (baseline != nullptr)
        if (const std::optional<TargetReached> reference = baseline->time_to_target();
            reference && reference->target == reached->target)
            detail += QStringLiteral(", %1 s").arg(
                signed_number(reached->seconds - reference->seconds, 1));
    return tr("%1 in %2 (%3)")
        .arg(QString::number(reached->target, 'f', 2), seconds_cell_text(reached->seconds), detail);
}

QString RunTableModel::images_per_s_text(const RunRecord& run, const RunRecord* baseline) const {
    const std::optional<double> images_per_s = run.mean_images_per_s();
    if (!images_per_s)
        return no_value;
    QString text = QString::number(*images_per_s, 'f', 0);
    if (baseline != nullptr && same_device_unit(run, *baseline))
        if (const std::optional<double> reference = baseline->mean_images_per_s();
            reference && *reference > 0)
            text += QStringLiteral(" (%1%)").arg(
                signed_number((*images_per_s / *reference - 1.0) * 100.0, 0));
    return text;
}

QString RunTableModel::efficiency_text(const RunRecord& run) const {
    const std::optional<ScalingEfficiency> efficiency = scaling_efficiency(runs_, run.id);
    if (!efficiency)
        return no_value;
    if (!efficiency->value)
        return tr("no 1-device run");
    const QString percent = QStringLiteral("%1%").arg(*efficiency->value * 100.0, 0, 'f', 0);
    return efficiency->same_total_cores ? tr("%1 (same cores)").arg(percent) : percent;
}

QStringList RunTableModel::notes(const RunRecord& run) {
    QStringList texts;
    for (const RunAnnotation& annotation : run_annotations(run))
        texts << annotation.text;
    return texts;
}

bool RunTableModel::is_numeric(int column) {
    return column >= BestAccuracyColumn && column <= EfficiencyColumn;
}

const RunRecord* RunTableModel::baseline_for(const RunRecord& run) const {
    if (runs_.baseline() == 0 || runs_.baseline() == run.id)
        return nullptr;
    return runs_.find(runs_.baseline());
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::TextAlignmentRole)
        return int((is_numeric(section) ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && section == EfficiencyColumn)
        return tr(
            "Images/s over devices × images/s of a 1-device run of the same configuration and "
            "threads per device (the baseline run when it is one, else the latest shown); 100% "
            "is perfect linear scaling. Devices sharing all cores are compared with 1 device on "
            "the same cores.");
    if (role != Qt::DisplayRole)
        return {};
    switch (section) {
        case NameColumn:
            return tr("Name");
        case TagsColumn:
            return tr("Tags");
        case ConfigurationColumn:
            return tr("Configuration");
        case StatusColumn:
            return tr("Status");
        case BestAccuracyColumn:
            return tr("Best val acc");
        case TimeToTargetColumn:
            return tr("Time to target");
        case ImagesPerSecondColumn:
            return tr("Images/s");
        case EfficiencyColumn:
            return tr("Scaling eff.");
        case NotesColumn:
            return tr("Notes");
        default:
            return {};
    }
}

bool RunTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return false;
    const RunRecord* run = runs_.find(runId(index.row()));
    if (run == nullptr)
        return false;
    if (index.column() == TagsColumn && role == Qt::EditRole) {
        runs_.setTags(run->id, value.toString().split(QLatin1Char(','), Qt::SkipEmptyParts));
        emit dataChanged(index, index, {role, Qt::DisplayRole});
        return true;
    }
    if (index.column() != NameColumn)
        return false;
    if (role == Qt::EditRole) {
        if (value.toString().trimmed().isEmpty())
            return false;
        runs_.rename(run->id, value.toString());
    } else if (role == Qt::CheckStateRole) {
        runs_.setVisible(run->id, static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked);
    } else {
        return false;
    }
    emit dataChanged(index, index, {role, Qt::DisplayRole});
    return true;
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex& index) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return Qt::NoItemFlags;
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == NameColumn)
        flags |= Qt::ItemIsEditable | Qt::ItemIsUserCheckable;
    if (index.column() == TagsColumn)
        flags |= Qt::ItemIsEditable;
    return flags;
}

QHash<int, QByteArray> RunTableModel::roleNames() const {
    QHash<int, QByteArray> names = QAbstractTableModel::roleNames();
    names.insert(RunIdRole, "runId");
    names.insert(ProgressRole, "progress");
    names.insert(StateRole, "state");
    names.insert(BaselineRole, "baseline");
    return names;
}

}  // namespace scalelab
