#include "run_table_model.h"

#include <QLocale>

#include <algorithm>
#include <cmath>
#include <utility>

#include "run_annotations.h"
#include "run_comparison.h"
#include "run_differences.h"
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
    : QAbstractItemModel(parent), runs_(runs) {
    for (const int id : runs_.ids())
        on_run_added(id);
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

QModelIndex RunTableModel::index(int row, int column, const QModelIndex& parent) const {
    if (!hasIndex(row, column, parent))
        return {};
    // A member's internalId() is its group's key, which stays put when top-level rows move.
    return createIndex(row, column, parent.isValid() ? rows_[std::size_t(parent.row())].key : 0);
}

QModelIndex RunTableModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || child.internalId() == 0)
        return {};
    const auto it = std::find_if(rows_.begin(), rows_.end(),
                                 [&](const Row& row) { return row.key == child.internalId(); });
    return it == rows_.end() ? QModelIndex() : createIndex(int(it - rows_.begin()), 0, quintptr(0));
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
    if (!parent.isValid())
        return int(rows_.size());
    if (parent.internalId() != 0 || parent.column() != 0)
        return 0;
    return int(rows_[std::size_t(parent.row())].members.size());
}

int RunTableModel::columnCount(const QModelIndex&) const {
    return ColumnCount;
}

int RunTableModel::runId(const QModelIndex& index) const {
    if (!index.isValid() || index.model() != this)
        return 0;
    if (index.internalId() == 0)
        return rows_[std::size_t(index.row())].run;
    const QModelIndex group = parent(index);
    return group.isValid() ? rows_[std::size_t(group.row())].members[std::size_t(index.row())] : 0;
}

QModelIndex RunTableModel::indexOfRun(int id, int column) const {
    const Place where = place(id);
    if (where.row < 0)
        return {};
    if (where.member < 0)
        return index(where.row, column);
    return index(where.member, column, index(where.row, 0));
}

RunTableModel::Place RunTableModel::place(int id) const {
    for (std::size_t row = 0; row < rows_.size(); ++row) {
        if (rows_[row].run == id)
            return {int(row), -1};
        const std::vector<int>& members = rows_[row].members;
        if (const auto it = std::find(members.begin(), members.end(), id); it != members.end())
            return {int(row), int(it - members.begin())};
    }
    return {};
}

int RunTableModel::group_row(const QString& group) const {
    const auto it = std::find_if(rows_.begin(), rows_.end(), [&](const Row& row) {
        return row.run == 0 && row.group == group;
    });
    return it == rows_.end() ? -1 : int(it - rows_.begin());
}

const RunTableModel::Row* RunTableModel::group_at(const QModelIndex& index) const {
    if (!index.isValid() || index.internalId() != 0)
        return nullptr;
    const Row& row = rows_[std::size_t(index.row())];
    return row.run == 0 ? &row : nullptr;
}

std::vector<const RunRecord*> RunTableModel::members(const Row& group) const {
    std::vector<const RunRecord*> runs;
    for (const int id : group.members)
        if (const RunRecord* run = runs_.find(id))
            runs.push_back(run);
    return runs;
}

const GroupSummary* RunTableModel::groupSummary(const QString& group) const {
    if (summaries_stale_) {
        summaries_.clear();
        for (const Row& row : rows_)
            if (row.run == 0)
                summaries_.push_back(group_summary(row.group, members(row)));
        summaries_stale_ = false;
    }
    const auto it =
        std::find_if(summaries_.begin(), summaries_.end(),
                     [&](const GroupSummary& summary) { return summary.group == group; });
    return it == summaries_.end() ? nullptr : &*it;
}

void RunTableModel::on_run_added(int id) {
    const RunRecord* run = runs_.find(id);
    summaries_stale_ = true;
    const int group = run == nullptr || run->group.isEmpty() ? -1 : group_row(run->group);
    if (group >= 0) {
        std::vector<int>& members = rows_[std::size_t(group)].members;
        beginInsertRows(index(group, 0), int(members.size()), int(members.size()));
        members.push_back(id);
        endInsertRows();
        emit_row_changed(index(group, 0));
        return;
    }
    const int row = int(rows_.size());
    beginInsertRows({}, row, row);
    if (run == nullptr || run->group.isEmpty())
        rows_.push_back(Row{.run = id});
    else
        rows_.push_back(Row{.group = run->group, .members = {id}, .key = next_key_++});
    endInsertRows();
}

void RunTableModel::on_run_removed(int id) {
    const Place removed = place(id);
    dirty_.erase(id);
    if (removed.row < 0)
        return;
    summaries_stale_ = true;
    Row& row = rows_[std::size_t(removed.row)];
    // A group leaves with its last run.
    if (removed.member >= 0 && row.members.size() > 1) {
        beginRemoveRows(index(removed.row, 0), removed.member, removed.member);
        row.members.erase(row.members.begin() + removed.member);
        endRemoveRows();
        emit_row_changed(index(removed.row, 0));
        return;
    }
    beginRemoveRows({}, removed.row, removed.row);
    rows_.erase(rows_.begin() + removed.row);
    endRemoveRows();
}

void RunTableModel::mark_dirty(int id) {
    dirty_.insert(id);
    // Only a member's change moves a group's figures: a run training alone, five times a
    // second, leaves them as they are.
    if (const RunRecord* run = runs_.find(id); run != nullptr && !run->group.isEmpty())
        summaries_stale_ = true;
    if (!update_timer_.isActive())
        update_timer_.start();
}

void RunTableModel::emit_dirty_rows() {
    // A baseline's figures are in every row's deltas, and a 1-device run's images/s in the
    // scaling efficiency of its multi-device twins; a member's figures are in its group's spread,
    // which other groups' notes compare with.
    bool every_row = false;
    bool top_level = false;
    std::vector<int> changed;
    for (const int id : std::exchange(dirty_, {})) {
        const Place where = place(id);
        const RunRecord* run = runs_.find(id);
        if (where.row < 0 || run == nullptr)
            continue;
        if (run->group != rows_[std::size_t(where.row)].group) {
            // The run joined or left a group (a store written by another process says so).
            on_run_removed(id);
            on_run_added(id);
            continue;
        }
        every_row |= id == runs_.baseline() || run->spec.devices == 1;
        top_level |= where.member >= 0;
        changed.push_back(id);
    }
    if (every_row) {
        emit_all_rows_changed();
        return;
    }
    if (top_level)
        emit dataChanged(index(0, 0), index(int(rows_.size()) - 1, ColumnCount - 1));
    for (const int id : changed)
        if (const QModelIndex row = indexOfRun(id); !top_level || row.parent().isValid())
            emit_row_changed(row);
}

void RunTableModel::emit_all_rows_changed() {
    if (rows_.empty())
        return;
    emit dataChanged(index(0, 0), index(int(rows_.size()) - 1, ColumnCount - 1));
    for (int row = 0; row < int(rows_.size()); ++row)
        if (const QModelIndex group = index(row, 0); rowCount(group) > 0)
            emit dataChanged(index(0, 0, group),
                             index(rowCount(group) - 1, ColumnCount - 1, group));
}

void RunTableModel::emit_row_changed(const QModelIndex& index) {
    emit dataChanged(index.siblingAtColumn(0), index.siblingAtColumn(ColumnCount - 1));
}

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    if (const Row* group = group_at(index))
        return group_data(*group, index.column(), role);
    // Null between a run's removal and the runRemoved signal reaching this model.
    const RunRecord* run = runs_.find(runId(index));
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
        case RunIdsRole:
            return QVariant::fromValue(QList<int>{run->id});
        case GroupRole:
            return QString();
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
            return configuration_text(run);
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
    if (column == ConfigurationColumn && only_differences_)
        return differences_tool_tip(run);
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

void RunTableModel::setOnlyDifferences(bool on, const std::vector<int>& among) {
    QStringList differences;
    if (on) {
        std::vector<const RunRecord*> compared;
        for (const int id : among)
            if (const RunRecord* run = runs_.find(id))
                compared.push_back(run);
        differences = fields_that_differ(compared);
    }
    if (on == only_differences_ && differences == differences_)
        return;
    only_differences_ = on;
    differences_ = differences;
    emit_all_rows_changed();
}

QString RunTableModel::configuration_text(const RunRecord& run) const {
    if (!only_differences_)
        return configuration_summary(run.spec);
    if (differences_.isEmpty())
        return tr("nothing differs");
    const QString text = fields_text(run.spec, differences_);
    return text.isEmpty() ? no_value : text;
}

QString RunTableModel::differences_tool_tip(const RunRecord& run) const {
    if (differences_.isEmpty())
        return tr("The runs listed have the same configuration.");
    QStringList lines{tr("What differs among the runs listed:")};
    for (const QString& key : differences_) {
        const SpecField& field = *find_spec_field(key.toStdString());
        const std::optional<QString> value = compared_value(field, run.spec);
        lines << QStringLiteral("%1 (%2): %3")
                     .arg(QString::fromUtf8(field.label.data(), qsizetype(field.label.size())), key,
                          !value             ? tr("does not apply")
                          : value->isEmpty() ? tr("none")
                                             : *value);
    }
    return lines.join(QLatin1Char('\n'));
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

namespace {

// What the Notes say of a group against `reference` (nothing without one).
QStringList notes_against(const GroupSummary& summary, const GroupSummary* reference) {
    return reference == nullptr ? QStringList() : noise_notes(summary, *reference);
}

// A group's figure (run_group.h spread_text), or no_value when none of its runs has it.
QString figure_text(const std::optional<Spread>& spread, int decimals, std::size_t members) {
    return spread ? spread_text(*spread, decimals, members) : no_value;
}

QString spread_tool_tip(const std::optional<Spread>& spread, int decimals) {
    if (!spread)
        return {};
    return RunTableModel::tr("Mean ± sample standard deviation over %n run(s); from %1 to %2",
                             nullptr, spread->count)
        .arg(QString::number(spread->min, 'f', decimals),
             QString::number(spread->max, 'f', decimals));
}

}  // namespace

QVariant RunTableModel::group_data(const Row& group, int column, int role) const {
    const GroupSummary* summary = groupSummary(group.group);
    if (summary == nullptr)
        return {};
    switch (role) {
        case Qt::DisplayRole:
        case Qt::EditRole:
            return group_display(group, *summary, column);
        case Qt::CheckStateRole: {
            if (column != NameColumn)
                return {};
            const std::vector<const RunRecord*> runs = members(group);
            const auto shown = std::count_if(runs.begin(), runs.end(),
                                             [](const RunRecord* run) { return run->visible; });
            return shown == 0
                       ? Qt::Unchecked
                       : (std::size_t(shown) == runs.size() ? Qt::Checked : Qt::PartiallyChecked);
        }
        case Qt::ToolTipRole:
            return group_tool_tip(group, *summary, column);
        case Qt::TextAlignmentRole:
            return int((is_numeric(column) ? Qt::AlignRight : Qt::AlignLeft) | Qt::AlignVCenter);
        case RunIdRole:
            return 0;
        case ProgressRole: {
            const std::vector<const RunRecord*> runs = members(group);
            double done = 0;
            for (const RunRecord* run : runs)
                done += run->progress() / double(runs.size());
            return done;
        }
        case StateRole:
            return int(group_state(group));
        case BaselineRole:
            return std::find(group.members.begin(), group.members.end(), runs_.baseline()) !=
                   group.members.end();
        case RunIdsRole:
            return QVariant::fromValue(QList<int>(group.members.begin(), group.members.end()));
        case GroupRole:
            return group.group;
        default:
            return {};
    }
}

QVariant RunTableModel::group_display(const Row& group, const GroupSummary& summary,
                                      int column) const {
    const std::vector<const RunRecord*> runs = members(group);
    if (runs.empty())
        return {};
    switch (column) {
        case NameColumn:
            return group_label(runs);
        case TagsColumn: {
            // The tags every member has.
            QStringList shared = runs.front()->tags;
            for (const RunRecord* run : runs)
                shared.removeIf([&](const QString& tag) { return !run->tags.contains(tag); });
            return shared.join(QStringLiteral(", "));
        }
        case ConfigurationColumn:
            // Members differ in nothing but the seed, which the configuration leaves out.
            return display(*runs.front(), column);
        case StatusColumn:
            return group_ended_text(summary);
        case BestAccuracyColumn:
            return figure_text(summary.best_val_accuracy, 3, runs.size());
        case TimeToTargetColumn:
            if (!summary.time_to_target_s)  // set with steps_to_target (group_summary)
                return no_value;
            return tr("%1 in %2 s, %3 steps")
                .arg(QString::number(summary.target, 'f', 2),
                     figure_text(summary.time_to_target_s, 1, runs.size()),
                     figure_text(summary.steps_to_target, 0, runs.size()));
        case ImagesPerSecondColumn:
            return figure_text(summary.images_per_s, 0, runs.size());
        case EfficiencyColumn:
            return no_value;
        case NotesColumn:
            return notes_against(summary, reference_group(summary, summaries_, baseline_group()))
                .join(QStringLiteral("; "));
        default:
            return {};
    }
}

QVariant RunTableModel::group_tool_tip(const Row& group, const GroupSummary& summary,
                                       int column) const {
    switch (column) {
        case StatusColumn: {
            QStringList lines{group_ended_text(summary)};
            for (const RunRecord* run : members(group))
                lines << QStringLiteral("%1: %2").arg(run->name, status_text(*run));
            return lines.join(QLatin1Char('\n'));
        }
        case BestAccuracyColumn:
            return spread_tool_tip(summary.best_val_accuracy, 3);
        case TimeToTargetColumn:
            return spread_tool_tip(summary.time_to_target_s, 1);
        case ImagesPerSecondColumn:
            return spread_tool_tip(summary.images_per_s, 0);
        case NotesColumn: {
            const GroupSummary* reference = reference_group(summary, summaries_, baseline_group());
            if (reference == nullptr)
                return tr("No other group to compare with");
            const Row& other = rows_[std::size_t(group_row(reference->group))];
            QStringList lines = notes_against(summary, reference);
            lines << tr("Compared with “%1” (Welch's t-test at %2%: docs/repeats.md)")
                         .arg(group_label(members(other)))
                         .arg(noise_level * 100.0);
            return lines.join(QLatin1Char('\n'));
        }
        default:
            return tr("%n run(s) of one experiment over seeds; they differ in nothing else",
                      nullptr, int(group.members.size()));
    }
}

QString RunTableModel::baseline_group() const {
    const RunRecord* baseline = runs_.find(runs_.baseline());
    return baseline == nullptr ? QString() : baseline->group;
}

RunState RunTableModel::group_state(const Row& group) const {
    const std::vector<const RunRecord*> runs = members(group);
    if (runs.empty())
        return RunState::Queued;
    const auto with = [&](auto&& test) {
        return std::find_if(runs.begin(), runs.end(),
                            [&](const RunRecord* run) { return test(run->state); });
    };
    if (const auto running = with([](RunState state) { return state == RunState::Running; });
        running != runs.end())
        return RunState::Running;
    const auto problem = with([](RunState state) {
        return state == RunState::Failed || state == RunState::Diverged ||
               state == RunState::Interrupted;
    });
    return (problem != runs.end() ? *problem : runs.front())->state;
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
    if (const Row* group = group_at(index)) {
        if (index.column() != NameColumn || role != Qt::CheckStateRole)
            return false;
        const bool visible = static_cast<Qt::CheckState>(value.toInt()) == Qt::Checked;
        for (const int id : group->members)
            runs_.setVisible(id, visible);
        emit dataChanged(index, index, {role});
        return true;
    }
    const RunRecord* run = runs_.find(runId(index));
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
    if (group_at(index) != nullptr)
        return Qt::ItemIsEnabled | Qt::ItemIsSelectable |
               (index.column() == NameColumn ? Qt::ItemIsUserCheckable : Qt::NoItemFlags);
    Qt::ItemFlags flags = Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemNeverHasChildren;
    if (index.column() == NameColumn)
        flags |= Qt::ItemIsEditable | Qt::ItemIsUserCheckable;
    if (index.column() == TagsColumn)
        flags |= Qt::ItemIsEditable;
    return flags;
}

QHash<int, QByteArray> RunTableModel::roleNames() const {
    QHash<int, QByteArray> names = QAbstractItemModel::roleNames();
    names.insert(RunIdRole, "runId");
    names.insert(ProgressRole, "progress");
    names.insert(StateRole, "state");
    names.insert(BaselineRole, "baseline");
    names.insert(RunIdsRole, "runIds");
    names.insert(GroupRole, "group");
    return names;
}

}  // namespace scalelab
