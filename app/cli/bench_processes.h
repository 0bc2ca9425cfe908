#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "cli/launched_processes.h"

namespace scalelab::cli {

// How long a bench command's collectives across processes wait for the others: the longest
// measurement one process makes while the others wait (the one-process anchor of `bench train`,
// a sweep's largest row), with room to spare.
inline constexpr std::chrono::minutes bench_process_timeout{10};

// A bench command started by mpirun or srun: the processes measure together, process 0 prints.
struct BenchProcesses {
    std::optional<LaunchedProcesses> processes;  // joined, every one with the same flags
    int exit_code = 0;                           // otherwise what the command returns
};

// Joins the processes (collective) and compares the flags each was started with: processes
// started differently would wait for each other in different collectives, so every one exits 2,
// process 0 naming the first that differs and both flag lines.
BenchProcesses join_bench_processes(const std::vector<std::string>& args,
                                    const std::string& help_command);

}  // namespace scalelab::cli
