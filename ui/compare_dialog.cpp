#include "compare_dialog.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QScreen>
#include <QScrollBar>
#include <QTableView>
#include <QVBoxLayout>

namespace scalelab {

CompareDialog::CompareDialog(const RunCollection& runs, std::vector<ComparedRuns> compared,
                             QWidget* parent)
    : QDialog(parent), model_(new CompareTableModel(runs, std::move(compared), this)) {
    setWindowTitle(tr("Compare runs"));

    auto* explanation = new QLabel(
        tr("The settings that differ among them, then their figures; a group's are its mean ± "
           "standard deviation over its runs."));
    explanation->setWordWrap(true);

    table_ = new QTableView;
    table_->setObjectName(QStringLiteral("compareTable"));
    table_->setModel(model_);
    table_->setSelectionMode(QAbstractItemView::ContiguousSelection);
    table_->setWordWrap(false);
    table_->setAlternatingRowColors(true);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->verticalHeader()->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);

    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    copy_ = buttons->addButton(tr("&Copy as CSV"), QDialogButtonBox::ActionRole);
    copy_->setToolTip(tr("Copy the table to the clipboard as comma-separated values"));
    connect(copy_, &QPushButton::clicked, this, &CompareDialog::copyAsCsv);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* layout = new QVBoxLayout(this);
    layout->addWidget(explanation);
    layout->addWidget(table_, 1);
    layout->addWidget(buttons);

    // The dialog opens at the table's whole size (QAbstractScrollArea's own size hint stops at
    // 36 lines wide), up to most of the screen; the table scrolls beyond.
    table_->resizeColumnsToContents();
    table_->resizeRowsToContents();
    const int frame = 2 * table_->frameWidth() + table_->verticalScrollBar()->sizeHint().width();
    const QSize whole(table_->verticalHeader()->width() + table_->horizontalHeader()->length(),
                      table_->horizontalHeader()->height() + table_->verticalHeader()->length());
    const QSize room = screen()->availableSize() * 0.9;
    const QSize around = sizeHint() - table_->sizeHint();
    resize((whole + QSize(frame, frame) + around).boundedTo(room));
}

void CompareDialog::copyAsCsv() {
    QApplication::clipboard()->setText(model_->toCsv());
}

}  // namespace scalelab
