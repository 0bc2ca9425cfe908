#pragma once

#include <QStyledItemDelegate>

namespace scalelab {

// Draws a running run's status as a progress bar (RunTableModel::ProgressRole) with the status
// text on it; other statuses as plain text. The row is tall enough for the bar: the run table's
// rows all take this height (QTreeView::uniformRowHeights).
class RunStatusDelegate : public QStyledItemDelegate {
    Q_OBJECT

  public:
    using QStyledItemDelegate::QStyledItemDelegate;

    void paint(QPainter* painter, const QStyleOptionViewItem& option,
               const QModelIndex& index) const override;
    QSize sizeHint(const QStyleOptionViewItem& option, const QModelIndex& index) const override;
};

}  // namespace scalelab
