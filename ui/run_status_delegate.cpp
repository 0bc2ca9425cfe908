#include "run_status_delegate.h"

#include <QApplication>
#include <QStyleOptionProgressBar>

#include <algorithm>
#include <cmath>

#include "run_record.h"
#include "run_table_model.h"

namespace scalelab {

namespace {

constexpr int bar_steps = 1000;  // the bar's resolution: 0.1%

}  // namespace

void RunStatusDelegate::paint(QPainter* painter, const QStyleOptionViewItem& option,
                              const QModelIndex& index) const {
    if (RunState(index.data(RunTableModel::StateRole).toInt()) != RunState::Running) {
        QStyledItemDelegate::paint(painter, option, index);
        return;
    }
    QStyle* style = option.widget != nullptr ? option.widget->style() : QApplication::style();

    // The cell first (selection, alternating colour), without its text: the bar carries it.
    QStyleOptionViewItem cell = option;
    initStyleOption(&cell, index);
    cell.text.clear();
    style->drawControl(QStyle::CE_ItemViewItem, &cell, painter, option.widget);

    QStyleOptionProgressBar bar;
    bar.palette = option.palette;
    bar.direction = option.direction;
    bar.fontMetrics = option.fontMetrics;
    bar.rect = option.rect.adjusted(3, 3, -3, -3);
    bar.state = option.state | QStyle::State_Horizontal;
    bar.minimum = 0;
    bar.maximum = bar_steps;
    bar.progress =
        int(std::lround(index.data(RunTableModel::ProgressRole).toDouble() * double(bar_steps)));
    bar.text = index.data(Qt::DisplayRole).toString();
    bar.textVisible = true;
    bar.textAlignment = Qt::AlignCenter;
    style->drawControl(QStyle::CE_ProgressBar, &bar, painter, option.widget);
}

QSize RunStatusDelegate::sizeHint(const QStyleOptionViewItem& option,
                                  const QModelIndex& index) const {
    const QSize size = QStyledItemDelegate::sizeHint(option, index);
    return {size.width(), std::max(size.height(), option.fontMetrics.height() + 12)};
}

}  // namespace scalelab
