#pragma once

#include <QIdentityProxyModel>

namespace scalelab {

class RunCollection;

// Adds what RunTableModel (Qt Core only) leaves to the GUI: the run's colour swatch in front of
// its name, the baseline's name in bold, hidden runs' names dimmed, and failed, diverged or
// interrupted statuses in red.
class RunTableStyleModel : public QIdentityProxyModel {
    Q_OBJECT

  public:
    explicit RunTableStyleModel(const RunCollection& runs, QObject* parent = nullptr);

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  private:
    const RunCollection& runs_;
};

}  // namespace scalelab
