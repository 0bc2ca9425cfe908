#include "cli/bench_sgemm_options.h"

#include "backend/cpu/sgemm_peak.h"
#include "cli/flag_parser.h"
#include "cli/flag_readers.h"

namespace scalelab::cli {

namespace {

const std::vector<Flag>& bench_sgemm_flags() {
    static const std::vector<Flag> flags = [] {
        const BenchSgemmOptions defaults;
        const std::string what = "What to measure";
        return with_bench_output_flags({
            {"threads", "T1,T2", "CPU thread counts, comma-separated (default 1)", what},
            {"size", "N",
             "matrix side, " + std::to_string(cpu::sgemm_min_size) + " to " +
                 std::to_string(cpu::sgemm_max_size) + " (default " +
                 std::to_string(defaults.size) + ")",
             what},
        });
    }();
    return flags;
}

std::string apply_sgemm_flag(const GivenFlag& given, BenchSgemmOptions& options) {
    if (given.name == "threads")
        return read_positive_list(given, options.threads);
    if (given.name == "size")
        return read_in_range(given, cpu::sgemm_min_size, cpu::sgemm_max_size, options.size);
    return {};
}

}  // namespace

ParsedBenchSgemmOptions parse_bench_sgemm_options(const std::vector<std::string>& args) {
    return parse_bench_options<ParsedBenchSgemmOptions>(args, bench_sgemm_flags(),
                                                        apply_sgemm_flag);
}

std::string bench_sgemm_help() {
    return format_help(
        "scalelab-cli bench sgemm [flags]",
        "Measures the machine's fp32 matrix-multiply peak: oneDNN's matmul (the kernels of the\n"
        "linear layers) on --size x --size matrices, two untimed calls, then ten timed ones of\n"
        "2*size^3 flops each. Prints GFLOP/s (median and max over the calls), one row per\n"
        "--threads count. This is the reference the GFLOP/s of 'bench train' are compared to.",
        bench_sgemm_flags(),
        "Examples:\n"
        "  scalelab-cli bench sgemm --threads 1,2\n"
        "  scalelab-cli bench sgemm --threads 1 --size 2048 --json");
}

}  // namespace scalelab::cli
