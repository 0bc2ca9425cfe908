#pragma once

#include <QDialog>

#include "cluster_job.h"
#include "train/run_spec.h"

class QDialogButtonBox;
class QLabel;
class QSpinBox;

namespace scalelab {

// File > Export cluster job...: the nodes and the cores per node to ask Slurm for, for the
// experiment in the form; OK stays disabled, with the reason shown, while the experiment cannot
// go as asked (cluster_job_problem).
class ClusterJobDialog : public QDialog {
    Q_OBJECT

  public:
    explicit ClusterJobDialog(const RunSpec& spec, QWidget* parent = nullptr);

    ClusterJob job() const;
    QSpinBox& nodesBox() { return *nodes_; }
    QSpinBox& coresBox() { return *cores_; }
    // The reason OK is disabled; empty when it is not.
    QString problem() const;

  private slots:
    void check();

  private:
    RunSpec spec_;
    QSpinBox* nodes_ = nullptr;
    QSpinBox* cores_ = nullptr;
    QLabel* summary_ = nullptr;
    QLabel* problem_ = nullptr;
    QDialogButtonBox* buttons_ = nullptr;
};

}  // namespace scalelab
