#include "cli/bench_sgemm_options.h"

#include "backend/cpu/sgemm_peak.h"
#include "cli/flag_parser.h"
#include "cli/flag_readers.h"
#include "cli/log_setup.h"

namespace scalelab::cli {

namespace {

const std::vector<Flag>& bench_sgemm_flags() {
    static const std::vector<Flag> flags = [] {
        const BenchSgemmOptions defaults;
        const std::string what = "What to measure", io = "Output";
        return std::vector<Flag>{
            {"threads", "T1,T2", "CPU thread counts, comma-separated (default 1)", what},
            {"size", "N",
             "matrix side, " + std::to_string(cpu::sgemm_min_size) + " to " +
                 std::to_string(cpu::sgemm_max_size) + " (default " +
                 std::to_string(defaults.size) + ")",
             what},
            {"json", "", "print one JSON object per result row", io},
            {"log-level", "LEVEL", log_level_names() + " (default info), logs go to stderr", io},
            {"help", "", "show this help", io},
        };
    }();
    return flags;
}

std::string apply(const GivenFlag& given, BenchSgemmOptions& options) {
    if (given.name == "threads")
        return read_positive_list(given, options.threads);
    if (given.name == "size")
        return read_in_range(given, cpu::sgemm_min_size, cpu::sgemm_max_size, options.size);
    if (given.name == "json") {
        options.json = true;
        return {};
    }
    if (given.name == "log-level") {
        if (!is_log_level(given.value))
            return "--log-level expects " + log_level_names() + ", got '" + given.value + "'";
        options.log_level = given.value;
    }
    return {};
}

}  // namespace

ParsedBenchSgemmOptions parse_bench_sgemm_options(const std::vector<std::string>& args) {
    const ParsedFlags flags = parse_flags(args, bench_sgemm_flags());
    ParsedBenchSgemmOptions parsed;
    parsed.problems = flags.problems;
    parsed.options.help = flags.has("help");
    for (const GivenFlag& given : flags.given)
        if (std::string problem = apply(given, parsed.options); !problem.empty())
            parsed.problems.push_back(std::move(problem));
    return parsed;
}

std::string bench_sgemm_help() {
    return format_help(
        "scalelab-cli bench sgemm [flags]",
        "Measures the machine's fp32 matrix-multiply peak: oneDNN's sgemm on --size x --size\n"
        "matrices, two untimed calls, then ten timed ones of 2*size^3 flops each. Prints\n"
        "GFLOP/s (median and max over the calls), one row per --threads count. This is the\n"
        "reference the GFLOP/s of 'bench train' are compared to.",
        bench_sgemm_flags(),
        "Examples:\n"
        "  scalelab-cli bench sgemm --threads 1,2\n"
        "  scalelab-cli bench sgemm --threads 1 --size 2048 --json");
}

}  // namespace scalelab::cli
