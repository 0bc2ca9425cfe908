#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli bench sgemm`: measures the fp32 matrix-multiply peak for each thread count
// asked for and prints a table row (or a JSON object) per count. `args` are the words after
// "bench sgemm".
int run_bench_sgemm_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
