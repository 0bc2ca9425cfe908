#include "cli/bench_allreduce_options.h"

#include <cctype>
#include <cstdint>
#include <utility>

#include "cli/flag_parser.h"
#include "cli/flag_readers.h"
#include "cli/flag_values.h"
#include "comm/allreduce_benchmark.h"

namespace scalelab::cli {

namespace {

// Past this a size is a typo, not a buffer: 1 TiB per device.
constexpr std::uint64_t max_size_bytes = std::uint64_t{1} << 40;

const std::vector<Flag>& bench_allreduce_flags() {
    static const std::vector<Flag> flags = [] {
        const BenchAllReduceOptions defaults;
        const std::string what = "What to measure";
        return with_bench_output_flags({
            {"backend", "B", "cpu (threads sharing memory) or cuda (GPUs, with NCCL); default cpu",
             what},
            {"devices", "N",
             "CPU devices (threads), 1 to " + std::to_string(comm::allreduce_max_devices) +
                 " (default " + std::to_string(defaults.devices) + "); cuda: the first N GPUs",
             what},
            {"gpus", "LIST", "cuda only: GPU indices such as 0,1 (default: every GPU)", what},
            {"sizes", "S1,S2", "bytes per device, K/M/G = 2^10/2^20/2^30 (default 1M,4M,16M,64M)",
             what},
            {"iters", "N",
             "timed iterations per size, after the warm-up (default " +
                 std::to_string(defaults.iterations) + ")",
             what},
        });
    }();
    return flags;
}

std::string read_sizes(const GivenFlag& given, std::vector<std::size_t>& out) {
    std::vector<std::size_t> sizes;
    for (const std::string& item : split_list(given.value)) {
        const std::optional<std::size_t> bytes = parse_byte_size(item);
        if (!bytes || *bytes < sizeof(float)) {
            sizes.clear();
            break;
        }
        sizes.push_back(*bytes);
    }
    if (sizes.empty())
        return expects(given.name, "sizes in bytes of at least 4 like 1M,64M (suffix K, M or G)",
                       given.value);
    out = std::move(sizes);
    return {};
}

std::string read_backend(const GivenFlag& given, AllReduceBackend& out) {
    if (given.value == "cpu")
        out = AllReduceBackend::Cpu;
    else if (given.value == "cuda")
        out = AllReduceBackend::Cuda;
    else
        return expects(given.name, "cpu or cuda", given.value);
    return {};
}

std::string apply_allreduce_flag(const GivenFlag& given, BenchAllReduceOptions& options) {
    if (given.name == "backend")
        return read_backend(given, options.backend);
    if (given.name == "devices") {
        std::string problem = read_in_range(given, 1, comm::allreduce_max_devices, options.devices);
        options.devices_given = problem.empty();
        return problem;
    }
    if (given.name == "gpus") {
        if (given.value.empty())
            return "--gpus needs GPU indices such as 0,1";
        options.gpus = given.value;
        return {};
    }
    if (given.name == "sizes")
        return read_sizes(given, options.sizes_bytes);
    if (given.name == "iters")
        return read_positive(given, options.iterations);
    return {};
}

}  // namespace

std::optional<std::size_t> parse_byte_size(const std::string& text) {
    if (text.empty())
        return std::nullopt;
    std::uint64_t unit = 1;
    std::string digits = text;
    switch (std::toupper(static_cast<unsigned char>(text.back()))) {
        case 'K':
            unit = std::uint64_t{1} << 10;
            break;
        case 'M':
            unit = std::uint64_t{1} << 20;
            break;
        case 'G':
            unit = std::uint64_t{1} << 30;
            break;
        default:
            break;
    }
    if (unit != 1)
        digits.pop_back();
    const std::optional<std::uint64_t> count = parse_uint64(digits);
    if (!count || *count == 0 || *count > max_size_bytes / unit)
        return std::nullopt;
    return static_cast<std::size_t>(*count * unit);
}

ParsedBenchAllReduceOptions parse_bench_allreduce_options(const std::vector<std::string>& args) {
    ParsedBenchAllReduceOptions parsed;
    parsed.problems = parse_bench_flags(
        args, bench_allreduce_flags(), parsed.options,
        [&parsed](const GivenFlag& given) { return apply_allreduce_flag(given, parsed.options); });
    // Flags that only make sense together, checked once every flag is read (in any order).
    const BenchAllReduceOptions& options = parsed.options;
    if (!options.gpus.empty() && options.backend == AllReduceBackend::Cpu)
        parsed.problems.push_back(
            "--gpus lists CUDA GPUs: add --backend cuda, or give --devices N for CPU devices");
    else if (!options.gpus.empty() && options.devices_given)
        parsed.problems.push_back(
            "give --gpus or --devices, not both: --gpus lists the GPUs, --devices N takes the "
            "first N");
    return parsed;
}

std::string bench_allreduce_help() {
    return format_help(
        "scalelab-cli bench allreduce [flags]",
        "Measures ScaleLab's shared-memory all-reduce between CPU devices: --devices threads,\n"
        "each with its own float buffer of each --sizes size, summed in place. Per iteration\n"
        "every device refills its buffer, waits in a barrier and times its all-reduce; the\n"
        "slowest device's time counts. After a warm-up (at least 5 iterations and 0.25 s),\n"
        "--iters timed ones; the median is reported with the nccl-tests bandwidths:\n"
        "  algbw = bytes / time,  busbw = algbw * 2 (N - 1) / N   (GB/s, 1e9 bytes/s)\n"
        "as ../shared/anchors/torch_anchor.py allreduce measures PyTorch's gloo all-reduce.\n"
        "With --backend cuda the devices are GPUs (--gpus, or the first --devices, or all):\n"
        "NCCL's all-reduce in GPU memory, one thread per GPU, each buffer filled once and\n"
        "each iteration timed with CUDA events around the all-reduce, as nccl-tests does.",
        bench_allreduce_flags(),
        "Examples:\n"
        "  scalelab-cli bench allreduce --devices 2 --sizes 1M,4M,16M,64M\n"
        "  scalelab-cli bench allreduce --devices 4 --sizes 16M --iters 50 --json\n"
        "  scalelab-cli bench allreduce --backend cuda --gpus 0,1 --sizes 1M,64M,1G");
}

}  // namespace scalelab::cli
