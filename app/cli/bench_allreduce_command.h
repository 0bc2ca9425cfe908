#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli bench allreduce`: measures the shared-memory all-reduce between CPU devices, or
// NCCL's between GPUs (--backend cuda), for each size asked for and prints a table row (or a
// JSON object) per size. Where the GPUs asked for cannot be used (none here, one missing), it
// says why and returns exit_bad_input, as for a bad flag. `args` are the words after
// "bench allreduce".
int run_bench_allreduce_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
