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
// process 0 saying different_flags.
BenchProcesses join_bench_processes(const std::vector<std::string>& args,
                                    const std::string& help_command);

// What process 0 says when the processes were started with different flags (`flags`: each
// process's arguments, by process; `hosts`: by process): the first process whose flags differ
// from process 0's, and both flag lines. Empty when they are all the same.
std::string different_flags(const std::vector<std::vector<std::string>>& flags,
                            const std::vector<std::string>& hosts);

}  // namespace scalelab::cli
