#include "cli/bench_sgemm_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "backend/cpu/sgemm_peak.h"
#include "cli/bench_common.h"
#include "cli/bench_sgemm_options.h"
#include "cli/exit_codes.h"
#include "cli/json_line.h"

namespace scalelab::cli {

namespace {

constexpr const char* bench_sgemm_help_command = "scalelab-cli bench sgemm --help";

void print_sgemm_table_header() {
    fmt::print("{:>8} {:>6} {:>16} {:>13}\n", "threads", "size", "GFLOP/s median", "GFLOP/s max");
}

void print_table_row(const cpu::SgemmPeak& peak) {
    fmt::print("{:>8} {:>6} {:>16.1f} {:>13.1f}\n", peak.threads, peak.size, peak.gflops_median,
               peak.gflops_max);
}

void print_json_row(const cpu::SgemmPeak& peak) {
    const std::string row = JsonLine()
                                .add("threads", peak.threads)
                                .add("size", peak.size)
                                .add("gflops", peak.gflops_median)
                                .add("gflops_max", peak.gflops_max)
                                .str();
    std::puts(row.c_str());
}

}  // namespace

int run_bench_sgemm_command(const std::vector<std::string>& args) {
    const ParsedBenchSgemmOptions parsed = parse_bench_sgemm_options(args);
    const BenchSgemmOptions& options = parsed.options;
    if (const auto done =
            start_bench(options, parsed.problems, bench_sgemm_help(), bench_sgemm_help_command))
        return *done;

    if (!options.json)
        print_sgemm_table_header();
    for (int threads : options.threads) {
        spdlog::debug("measuring sgemm of size {} on {} threads", options.size, threads);
        cpu::SgemmPeak peak;
        if (const auto failed =
                measure_or_report([&] { peak = cpu::measure_sgemm_peak(threads, options.size); },
                                  bench_sgemm_help_command))
            return *failed;
        if (options.json)
            print_json_row(peak);
        else
            print_table_row(peak);
        std::fflush(stdout);
    }
    return exit_ok;
}

}  // namespace scalelab::cli
