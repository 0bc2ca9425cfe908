#include "run_table_style_model.h"

#include <QFont>
#include <QGuiApplication>
#include <QPalette>

#include <algorithm>
#include <vector>

#include "run_collection.h"
#include "run_palette.h"
#include "run_table_model.h"
#include "theme.h"

namespace scalelab {

RunTableStyleModel::RunTableStyleModel(const RunCollection& runs, QObject* parent)
    : QIdentityProxyModel(parent), runs_(runs) {}

QVariant RunTableStyleModel::data(const QModelIndex& index, int role) const {
    const QVariant text = QIdentityProxyModel::data(index, role);
    if (role != Qt::DecorationRole && role != Qt::FontRole && role != Qt::ForegroundRole)
        return text;
    // A run's row stands for the run, a group's for all its runs.
    std::vector<const RunRecord*> runs;
    for (const int id : index.data(RunTableModel::RunIdsRole).value<QList<int>>())
        if (const RunRecord* run = runs_.find(id))
            runs.push_back(run);
    if (runs.empty())
        return text;
    const bool name = index.column() == RunTableModel::NameColumn;
    switch (role) {
        case Qt::DecorationRole:
            // A group wears its first run's colour, as its band on the charts does.
            return name ? QVariant(run_colour(runs.front()->colour)) : text;
        case Qt::FontRole:
            if (name && index.data(RunTableModel::BaselineRole).toBool()) {
                QFont bold;
                bold.setBold(true);
                return bold;
            }
            return text;
        case Qt::ForegroundRole: {
            if (name && std::none_of(runs.begin(), runs.end(),
                                     [](const RunRecord* run) { return run->visible; }))
                return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
            const auto state = RunState(index.data(RunTableModel::StateRole).toInt());
            if (index.column() == RunTableModel::StatusColumn &&
                (state == RunState::Failed || state == RunState::Diverged ||
                 state == RunState::Interrupted))
                return problem_colour(current_theme());
            return text;
        }
        default:
            return text;
    }
}

}  // namespace scalelab
