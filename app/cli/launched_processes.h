#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/process_group.h"

namespace scalelab::cli {

// The processes mpirun or srun started together with this one, for a command that works across
// them (`train`, `bench`): process 0 prints and records as a lone process does; the others
// print only errors, each line prefixed with their process and host. Started without a launcher
// (or built without MPI), the process is alone.
struct LaunchedProcesses {
    std::shared_ptr<comm::ProcessGroup> group;
    std::vector<std::string> hosts;  // by process

    bool alone() const { return group->count() == 1; }
    bool leader() const { return group->index() == 0; }
    bool on_one_host() const;
    // "2 processes x 2 devices on hosts a, b"
    std::string layout(int devices) const;
};

// Joins the processes (collective across them; `timeout`: how long each collective waits for
// the others), and makes a follower's log print errors only, prefixed with its process and host
// ("[process 1 on node17] ..."). Nothing when the join failed: the reason has been printed.
std::optional<LaunchedProcesses> join_cli_processes(std::chrono::milliseconds timeout);

// "process 1 on node17": what a follower's lines start with.
std::string follower_prefix(const comm::ProcessGroup& group);

}  // namespace scalelab::cli
