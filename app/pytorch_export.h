#pragma once

#include <QString>
#include <QStringList>

#include "train/run_spec.h"

namespace scalelab {

// An experiment carried to PyTorch (scalelab-cli export pytorch; docs/pytorch.md): a folder
// with
//  - train_ddp.py: one readable script, ScaleLab's epoch order, inputs, learning-rate rules and
//    model (resources/pytorch/) and a DistributedDataParallel training loop that writes
//    ScaleLab's metrics JSON lines;
//  - experiment.json: the experiment, which the script reads;
//  - launch.sh: its processes on this machine (gloo on CPU, NCCL on GPUs), started with the
//    environment DDP reads (Debian 12's torchrun fails on its Python 3.11);
//  - job.sbatch: Slurm, several nodes, torchrun with the c10d rendezvous;
//  - README.md: the commands.

// What in `spec` the export cannot carry to PyTorch, each naming the field and what to change;
// empty when it can.
QStringList pytorch_export_problems(const RunSpec& spec);

// What the script carries differently from ScaleLab (the field, what PyTorch does instead);
// the export goes ahead and its README.md lists them.
QStringList pytorch_export_warnings(const RunSpec& spec);

// Writes the five files into `folder` (made if missing), each whole or not at all. False with
// `error` saying why (the problems above, or the file that could not be written).
bool write_pytorch_export(const RunSpec& spec, const QString& folder, QString* error);

}  // namespace scalelab
