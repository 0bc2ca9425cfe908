#include "cluster_job_dialog.h"

#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

#include <algorithm>

#include "theme.h"

namespace scalelab {

ClusterJobDialog::ClusterJobDialog(const RunSpec& spec, QWidget* parent)
    : QDialog(parent), spec_(spec) {
    setWindowTitle(tr("Export cluster job"));
    nodes_ = new QSpinBox;
    nodes_->setObjectName(QStringLiteral("nodes"));
    nodes_->setRange(0, 4096);
    nodes_->setValue(ClusterJob{}.nodes);
    cores_ = new QSpinBox;
    cores_->setObjectName(QStringLiteral("coresPerNode"));
    cores_->setRange(0, 1024);
    cores_->setValue(std::max(ClusterJob{}.cpus_per_node, spec.devices));
    summary_ = new QLabel;
    summary_->setObjectName(QStringLiteral("summary"));
    summary_->setWordWrap(true);
    problem_ = new QLabel;
    problem_->setObjectName(QStringLiteral("problem"));
    problem_->setWordWrap(true);
    buttons_ = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
    buttons_->button(QDialogButtonBox::Ok)->setText(tr("Save..."));
    connect(buttons_, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons_, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto* form = new QFormLayout;
    form->addRow(tr("Nodes"), nodes_);
    form->addRow(tr("Cores per node"), cores_);
    auto* intro = new QLabel(
        tr("An sbatch script and the experiment beside it: one scalelab-cli process "
           "per node, joined over MPI (and NCCL for GPUs) into one run (docs/cluster.md)."));
    intro->setWordWrap(true);
    // About sixty characters a line: the wrapped text, not the screen, sets the width.
    setMinimumWidth(fontMetrics().averageCharWidth() * 60);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(intro);
    layout->addLayout(form);
    layout->addWidget(summary_);
    layout->addWidget(problem_);
    layout->addWidget(buttons_);
    for (QSpinBox* box : {nodes_, cores_})
        connect(box, &QSpinBox::valueChanged, this, &ClusterJobDialog::check);
    check();
}

ClusterJob ClusterJobDialog::job() const {
    return {.nodes = nodes_->value(), .cpus_per_node = cores_->value()};
}

QString ClusterJobDialog::problem() const {
    return problem_->text();
}

void ClusterJobDialog::check() {
    const QString problem = cluster_job_problem(spec_, job());
    summary_->setText(
        tr("%1 nodes x %2 %3 = %4 ranks, global batch %5")
            .arg(nodes_->value())
            .arg(spec_.devices)
            .arg(spec_.device == DeviceKind::Gpu ? tr("GPUs") : tr("CPU devices"))
            .arg(nodes_->value() * spec_.devices)
            .arg(qint64(nodes_->value()) * spec_.devices * spec_.batch * spec_.accumulation));
    problem_->setText(problem);
    show_in_problem_colour(*problem_);
    buttons_->button(QDialogButtonBox::Ok)->setEnabled(problem.isEmpty());
}

}  // namespace scalelab
