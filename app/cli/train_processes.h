#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/launched_processes.h"
#include "train/run_spec.h"

namespace scalelab::cli {

// `scalelab-cli train` started by mpirun or srun as one of several processes: they train one
// run together (Trainer::set_process_group), process 0 in charge of the output.

// join_cli_processes with the run's collective timeout.
std::optional<LaunchedProcesses> join_train_processes(const RunSpec& spec);

// The exit code when the processes were not started with the same experiment (every process
// exits 2, process 0 printing which fields differ and where); nothing when they were.
// Collective.
std::optional<int> refuse_different_experiments(const LaunchedProcesses& processes,
                                                const RunSpec& spec);

// A follower's run: loads the data, trains its devices' part of the run with process 0, and
// returns the exit code (an error printed first).
int train_as_follower(const RunSpec& spec, const LaunchedProcesses& processes);

}  // namespace scalelab::cli
