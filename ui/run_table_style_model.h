#pragma once

#include <QIdentityProxyModel>

namespace scalelab {

class RunCollection;

// Adds what RunTableModel (Qt Core only) leaves to the GUI: the run's colour swatch in front of
// its name, the baseline's name in bold, hidden runs' names dimmed, and failed, diverged or
// interrupted statuses in red. A group's row takes its first run's colour, is bold when the
// baseline is one of its runs, dimmed when all its runs are hidden, and red when one of them
// failed, diverged or was interrupted.
class RunTableStyleModel : public QIdentityProxyModel {
    Q_OBJECT

  public:
    explicit RunTableStyleModel(const RunCollection& runs, QObject* parent = nullptr);

    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;

  private:
    const RunCollection& runs_;
};

}  // namespace scalelab
