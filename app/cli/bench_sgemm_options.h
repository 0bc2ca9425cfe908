#pragma once

#include <string>
#include <vector>

#include "cli/bench_common.h"

namespace scalelab::cli {

// What `scalelab-cli bench sgemm` was asked to measure: one size x size matrix multiply per
// listed thread count.
struct BenchSgemmOptions : BenchOutputOptions {
    std::vector<int> threads{1};
    int size = 1024;
};

struct ParsedBenchSgemmOptions {
    BenchSgemmOptions options;
    std::vector<std::string> problems;  // each says what to change; empty: options are usable
};

// Reads the words after "bench sgemm".
ParsedBenchSgemmOptions parse_bench_sgemm_options(const std::vector<std::string>& args);

std::string bench_sgemm_help();

}  // namespace scalelab::cli
