#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "train/run_spec.h"

namespace scalelab::cli {

// `scalelab-cli train` started by mpirun or srun as one of several processes: they train one run
// together (Trainer::set_process_group). Process 0 loads, records and prints as a lone process
// does; the others train their part and print only errors, each line prefixed with their
// process and host. Started without a launcher (or built without MPI), the process is alone.
struct TrainProcesses {
    std::shared_ptr<comm::ProcessGroup> group;
    std::vector<std::string> hosts;  // by process

    bool alone() const { return group->count() == 1; }
    bool leader() const { return group->index() == 0; }
    // "2 processes x 2 devices on hosts a, b"
    std::string layout(int devices) const;
};

// Joins the processes the launcher started with this one (collective across them), and makes a
// follower's log print errors only, prefixed with its process and host. Nothing when the join
// failed: the reason has been printed.
std::optional<TrainProcesses> join_train_processes(const RunSpec& spec);

// The exit code when the processes were not started with the same experiment (every process
// exits 2, process 0 printing which fields differ and where); nothing when they were.
// Collective.
std::optional<int> refuse_different_experiments(const TrainProcesses& processes,
                                                const RunSpec& spec);

// A follower's run: loads the data, trains its devices' part of the run with process 0, and
// returns the exit code (an error printed first).
int train_as_follower(const RunSpec& spec, const TrainProcesses& processes);

}  // namespace scalelab::cli
