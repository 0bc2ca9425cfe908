#include "cli/bench_allreduce_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>

#include "cli/bench_allreduce_options.h"
#include "cli/bench_common.h"
#include "cli/exit_codes.h"
#include "cli/json_line.h"
#include "comm/allreduce_benchmark.h"

namespace scalelab::cli {

namespace {

constexpr const char* help_command = "scalelab-cli bench allreduce --help";

void print_table_header() {
    fmt::print("{:>8} {:>12} {:>10} {:>11} {:>11}\n", "devices", "bytes", "time ms", "algbw GB/s",
               "busbw GB/s");
}

void print_table_row(const comm::AllReduceRow& row) {
    fmt::print("{:>8} {:>12} {:>10.3f} {:>11.2f} {:>11.2f}\n", row.devices, row.bytes, row.time_ms,
               row.algbw_GBs, row.busbw_GBs);
}

void print_json_row(const comm::AllReduceRow& row) {
    const std::string line = JsonLine()
                                 .add("devices", row.devices)
                                 .add("bytes", static_cast<std::int64_t>(row.bytes))
                                 .add("time_ms", row.time_ms)
                                 .add("algbw_GBs", row.algbw_GBs)
                                 .add("busbw_GBs", row.busbw_GBs)
                                 .str();
    std::puts(line.c_str());
}

}  // namespace

int run_bench_allreduce_command(const std::vector<std::string>& args) {
    const ParsedBenchAllReduceOptions parsed = parse_bench_allreduce_options(args);
    const BenchAllReduceOptions& options = parsed.options;
    if (const auto done =
            start_bench(options, parsed.problems, bench_allreduce_help(), help_command))
        return *done;

    if (!options.json)
        print_table_header();
    for (std::size_t bytes : options.sizes_bytes) {
        spdlog::debug("measuring all-reduce of {} bytes on {} devices", bytes, options.devices);
        std::vector<comm::AllReduceRow> rows;
        if (const auto failed = measure_or_report(
                [&] {
                    rows =
                        comm::run_allreduce_benchmark(options.devices, {bytes}, options.iterations);
                },
                help_command))
            return *failed;
        for (const comm::AllReduceRow& row : rows) {
            if (options.json)
                print_json_row(row);
            else
                print_table_row(row);
        }
        std::fflush(stdout);  // one row at a time: large sizes take a while
    }
    return exit_ok;
}

}  // namespace scalelab::cli
