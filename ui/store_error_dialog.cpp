#include "store_error_dialog.h"

#include <QAbstractButton>
#include <QDir>
#include <QPushButton>

namespace scalelab {

StoreErrorDialog::StoreErrorDialog(const QString& path, const QString& problem,
                                   const QString& go_on, QWidget* parent)
    : QMessageBox(parent) {
    setObjectName(QStringLiteral("storeErrorDialog"));
    setIcon(QMessageBox::Warning);
    setWindowTitle(tr("Cannot open the run store"));
    setText(tr("ScaleLab cannot open the run store %1.").arg(QDir::toNativeSeparators(path)));
    setInformativeText(
        tr("%1\n\nThe file is left as it is: ScaleLab never overwrites or deletes it.")
            .arg(problem));
    open_another_ = addButton(tr("Open Another File..."), QMessageBox::AcceptRole);
    open_another_->setObjectName(QStringLiteral("openAnotherStore"));
    new_store_ = addButton(tr("Start a New Store..."), QMessageBox::AcceptRole);
    new_store_->setObjectName(QStringLiteral("newStore"));
    QPushButton* go_on_button = addButton(go_on, QMessageBox::RejectRole);
    go_on_button->setObjectName(QStringLiteral("goOnWithoutStore"));
    setDefaultButton(qobject_cast<QPushButton*>(open_another_));
    setEscapeButton(go_on_button);
}

StoreErrorDialog::Choice StoreErrorDialog::choice() const {
    if (clickedButton() == open_another_)
        return Choice::OpenAnother;
    if (clickedButton() == new_store_)
        return Choice::NewStore;
    return Choice::GoOn;
}

}  // namespace scalelab
