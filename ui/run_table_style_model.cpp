#include "run_table_style_model.h"

#include <QFont>
#include <QGuiApplication>
#include <QPalette>

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
    const RunRecord* run = runs_.find(index.data(RunTableModel::RunIdRole).toInt());
    if (run == nullptr)
        return text;
    const bool name = index.column() == RunTableModel::NameColumn;
    switch (role) {
        case Qt::DecorationRole:
            return name ? QVariant(run_colour(run->colour)) : text;
        case Qt::FontRole:
            if (name && run->id == runs_.baseline()) {
                QFont bold;
                bold.setBold(true);
                return bold;
            }
            return text;
        case Qt::ForegroundRole:
            if (name && !run->visible)
                return QGuiApplication::palette().color(QPalette::Disabled, QPalette::Text);
            if (index.column() == RunTableModel::StatusColumn &&
                (run->state == RunState::Failed || run->state == RunState::Diverged ||
                 run->state == RunState::Interrupted))
                return problem_colour(current_theme());
            return text;
        default:
            return text;
    }
}

}  // namespace scalelab
