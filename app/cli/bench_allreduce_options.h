#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cli/bench_common.h"

namespace scalelab::cli {

// What moves the bytes: CPU devices (threads sharing memory, ThreadComm) or GPUs (NCCL).
enum class AllReduceBackend { Cpu, Cuda };

// What `scalelab-cli bench allreduce` was asked to measure: a float sum all-reduce over
// `devices` CPU devices (threads sharing memory), or over GPUs with NCCL, one row per size.
struct BenchAllReduceOptions : BenchOutputOptions {
    AllReduceBackend backend = AllReduceBackend::Cpu;
    // CPU devices; with the cuda backend, the first `devices` GPUs when devices_given.
    int devices = 2;
    bool devices_given = false;
    // --gpus as given, only with the cuda backend ("": not given, every GPU present). Checked
    // against the machine's GPUs when the command runs (select_listed_gpus).
    std::string gpus;
    std::vector<std::size_t> sizes_bytes{std::size_t{1} << 20, std::size_t{4} << 20,
                                         std::size_t{16} << 20, std::size_t{64} << 20};
    int iterations = 20;
};

struct ParsedBenchAllReduceOptions {
    BenchAllReduceOptions options;
    std::vector<std::string> problems;  // each says what to change; empty: options are usable
};

// Reads the words after "bench allreduce".
ParsedBenchAllReduceOptions parse_bench_allreduce_options(const std::vector<std::string>& args);

// "64M" -> 64 * 2^20. A whole number of bytes, optionally followed by K, M or G (2^10, 2^20,
// 2^30; either case); nothing for anything else, for 0, or for a value past 2^40 bytes.
std::optional<std::size_t> parse_byte_size(const std::string& text);

std::string bench_allreduce_help();

}  // namespace scalelab::cli
