#pragma once

#include <QString>

#include "train/run_spec.h"

namespace scalelab {

// An experiment carried to a Slurm cluster (File > Export cluster job...): one scalelab-cli
// process per node, each training the experiment's devices (CPU devices, or that many GPUs of
// the node), joined into one run of nodes x devices ranks over MPI and, for GPUs, NCCL
// (docs/cluster.md).
struct ClusterJob {
    int nodes = 2;
    int cpus_per_node = 8;  // Slurm's --cpus-per-task: shared among the node's devices
};

// Why `spec` cannot go to a cluster as `job`, as advice; empty when it can: nodes must be at
// least 1, and each device needs a core (a CPU device's work, a GPU's host thread).
QString cluster_job_problem(const RunSpec& spec, const ClusterJob& job);

// The sbatch script that trains the experiment in `config_name` (a --config file beside the
// script) on the job's nodes, recording into scalelab-<job id>.sqlite for `runs import`. A GPU
// experiment asks for spec.devices GPUs per node (--gpus-per-node).
QString cluster_job_script(const RunSpec& spec, const ClusterJob& job, const QString& config_name);

// Writes the script to `sbatch_path` and the experiment beside it as <stem>.json (without this
// machine's GPU indices), each whole or not at all. False with `error` naming the file and the
// reason (or the problem above).
bool write_cluster_job(const RunSpec& spec, const ClusterJob& job, const QString& sbatch_path,
                       QString* error);

}  // namespace scalelab
