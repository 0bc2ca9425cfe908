#include "compare_table_model.h"

#include <algorithm>

#include "metrics_export.h"
#include "run_collection.h"
#include "run_differences.h"

namespace scalelab {

namespace {

// "0.897", or for a group "0.897 ± 0.003", and "(3 of 5)" when only some members have the figure.
QString spread_cell(const std::optional<Spread>& spread, const ComparedRuns& column, int decimals,
                    const QString& unit) {
    if (!spread)
        return QStringLiteral("—");
    if (column.group)
        return spread_text(*spread, decimals, column.run_ids.size(), unit);
    return QString::number(spread->mean, 'f', decimals) + unit;
}

}  // namespace

CompareTableModel::CompareTableModel(const RunCollection& runs, std::vector<ComparedRuns> compared,
                                     QObject* parent)
    : QAbstractTableModel(parent), runs_(runs), compared_(std::move(compared)) {
    update_fields();
    connect(&runs_, &RunCollection::runChanged, this, &CompareTableModel::on_run_changed);
    connect(&runs_, &RunCollection::curvesChanged, this, &CompareTableModel::on_run_changed);
    connect(&runs_, &RunCollection::runRemoved, this, &CompareTableModel::on_run_removed);
}

int CompareTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(fields_.size()) + figure_count;
}

int CompareTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(compared_.size());
}

QVariant CompareTableModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid))
        return {};
    const ComparedRuns& column = compared_[std::size_t(index.column())];
    const bool field = index.row() < int(fields_.size());
    if (role == Qt::TextAlignmentRole)
        return int((field ? Qt::AlignLeft : Qt::AlignRight) | Qt::AlignVCenter);
    if (role != Qt::DisplayRole)
        return {};
    if (field)
        return field_text(fields_[index.row()], column);
    return figure_text(Figure(index.row() - int(fields_.size())), column);
}

QVariant CompareTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation == Qt::Horizontal) {
        if (section < 0 || section >= int(compared_.size()))
            return {};
        const ComparedRuns& column = compared_[std::size_t(section)];
        if (role == Qt::DisplayRole)
            return column.group ? tr("%1 (group of %2)").arg(column.name).arg(column.run_ids.size())
                                : column.name;
        if (role == Qt::ToolTipRole && column.group)
            return tr(
                "Each figure is the mean ± the sample standard deviation over the members "
                "that have it");
        return {};
    }
    if (section < int(fields_.size())) {
        const SpecField* field = find_spec_field(fields_[section].toStdString());
        if (role == Qt::DisplayRole)
            return fields_[section];
        if (role == Qt::ToolTipRole && field != nullptr)
            return QStringLiteral("%1: %2").arg(
                QString::fromUtf8(field->label.data(), qsizetype(field->label.size())),
                QString::fromUtf8(field->help.data(), qsizetype(field->help.size())));
        return {};
    }
    if (role != Qt::DisplayRole)
        return {};
    switch (Figure(section - int(fields_.size()))) {
        case Figure::Runs:
            return tr("Runs");
        case Figure::BestAccuracy:
            return tr("Best val acc");
        case Figure::TimeToTarget:
            return tr("Time to target");
        case Figure::StepsToTarget:
            return tr("Steps to target");
        case Figure::ImagesPerSecond:
            return tr("Images/s");
    }
    return {};
}

QString CompareTableModel::toCsv() const {
    QStringList lines;
    QStringList header{QString()};
    for (int column = 0; column < columnCount(); ++column)
        header << csv_field(headerData(column, Qt::Horizontal).toString());
    lines << header.join(QLatin1Char(','));
    for (int row = 0; row < rowCount(); ++row) {
        QStringList cells{csv_field(headerData(row, Qt::Vertical).toString())};
        for (int column = 0; column < columnCount(); ++column)
            cells << csv_field(index(row, column).data().toString());
        lines << cells.join(QLatin1Char(','));
    }
    return lines.join(QLatin1Char('\n')) + QLatin1Char('\n');
}

void CompareTableModel::update_fields() {
    std::vector<std::vector<const RunRecord*>> sets;
    for (const ComparedRuns& column : compared_)
        sets.push_back(members(column));
    fields_ = fields_that_differ(sets);
}

bool CompareTableModel::compares(int id) const {
    return std::any_of(compared_.begin(), compared_.end(), [id](const ComparedRuns& column) {
        return std::find(column.run_ids.begin(), column.run_ids.end(), id) != column.run_ids.end();
    });
}

void CompareTableModel::on_run_changed(int id) {
    if (compares(id) && !compared_.empty())
        emit dataChanged(index(figureRow(Figure::Runs), 0),
                         index(rowCount() - 1, columnCount() - 1));
}

void CompareTableModel::on_run_removed(int id) {
    if (!compares(id))
        return;
    beginResetModel();
    for (ComparedRuns& column : compared_)
        std::erase(column.run_ids, id);
    std::erase_if(compared_, [](const ComparedRuns& column) { return column.run_ids.empty(); });
    update_fields();
    endResetModel();
}

std::vector<const RunRecord*> CompareTableModel::members(const ComparedRuns& column) const {
    std::vector<const RunRecord*> runs;
    for (const int id : column.run_ids)
        if (const RunRecord* run = runs_.find(id))
            runs.push_back(run);
    return runs;
}

QString CompareTableModel::field_text(const QString& key, const ComparedRuns& column) const {
    std::vector<const RunSpec*> specs;
    for (const RunRecord* run : members(column))
        specs.push_back(&run->spec);
    return shared_value_text(*find_spec_field(key.toStdString()), specs);
}

QString CompareTableModel::figure_text(Figure figure, const ComparedRuns& column) const {
    const std::vector<const RunRecord*> runs = members(column);
    const GroupSummary summary = group_summary(column.name, runs);
    switch (figure) {
        case Figure::Runs:
            if (!column.group && !runs.empty())
                return QString::fromUtf8(to_string(runs.front()->state));
            return group_ended_text(summary);
        case Figure::BestAccuracy:
            return spread_cell(summary.best_val_accuracy, column, 3, {});
        case Figure::TimeToTarget:
            // Members may reach different marks; the figure is to the lowest of those reached.
            if (!summary.time_to_target_s)
                return QStringLiteral("—");
            return tr("%1 in %2")
                .arg(QString::number(summary.target, 'f', 2),
                     spread_cell(summary.time_to_target_s, column, 1, QStringLiteral(" s")));
        case Figure::StepsToTarget:
            return spread_cell(summary.steps_to_target, column, 0, {});
        case Figure::ImagesPerSecond:
            return spread_cell(summary.images_per_s, column, 0, {});
    }
    return {};
}

}  // namespace scalelab
