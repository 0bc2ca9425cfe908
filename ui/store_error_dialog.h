#pragma once

#include <QMessageBox>

namespace scalelab {

// Says why a run store could not be opened (corrupt, unreadable, locked, written by a newer
// ScaleLab) and what the user can do: open another file, start a new store, or go on without
// this one (in memory only, or keeping the store already open). The file itself is never
// touched.
class StoreErrorDialog : public QMessageBox {
    Q_OBJECT

  public:
    enum class Choice { OpenAnother, NewStore, GoOn };

    // `go_on` is the third button's text: "Continue without a store" or "Keep the current store".
    StoreErrorDialog(const QString& path, const QString& problem, const QString& go_on,
                     QWidget* parent = nullptr);

    // What was clicked; GoOn when the dialog was closed.
    Choice choice() const;

  private:
    QAbstractButton* open_another_ = nullptr;
    QAbstractButton* new_store_ = nullptr;
};

}  // namespace scalelab
