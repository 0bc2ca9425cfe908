#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli bench train`: measures training throughput for every combination asked for
// and prints a table row (or a JSON object) per combination; `bench sgemm` (see
// bench_sgemm_command.h) measures the matrix-multiply peak. `args` are the words after "bench".
int run_bench_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
