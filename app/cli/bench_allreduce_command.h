#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli bench allreduce`: measures the shared-memory all-reduce between CPU devices
// for each size asked for and prints a table row (or a JSON object) per size. `args` are the
// words after "bench allreduce".
int run_bench_allreduce_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
