#pragma once

#include <string>
#include <vector>

#include "cli/bench_common.h"
#include "train/run_spec.h"
#include "train/throughput.h"

namespace scalelab::cli {

// What `scalelab-cli bench train` was asked to measure: every combination of the listed
// models, batches, thread counts and device counts, each with the settings in `base`.
struct BenchTrainOptions : BenchOutputOptions {
    std::vector<std::string> models{"cnn"};
    std::vector<int> batches{128};  // per device
    std::vector<int> threads{1};    // per device
    std::vector<int> devices{1};
    DeviceKind device = DeviceKind::Cpu;  // gpu: each device count is the first that many GPUs
    ThroughputConfig base;  // width, image geometry, warm-up, windows and their length
};

struct ParsedBenchTrainOptions {
    BenchTrainOptions options;
    std::vector<std::string> problems;  // each says what to change; empty: options are usable
};

// Reads the words after "bench train".
ParsedBenchTrainOptions parse_bench_train_options(const std::vector<std::string>& args);

std::string bench_help();

}  // namespace scalelab::cli
