#include "cli/bench_allreduce_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <utility>
#include <vector>

#include "backend/device_inventory.h"
#include "backend/gpu_runtime.h"
#include "backend/gpu_selection.h"
#include "cli/bench_allreduce_options.h"
#include "cli/bench_common.h"
#include "cli/bench_processes.h"
#include "cli/exit_codes.h"
#include "cli/json_line.h"
#include "cli/report_problems.h"
#include "comm/allreduce_benchmark.h"
#include "comm/process_group.h"

namespace scalelab::cli {

namespace {

constexpr const char* bench_allreduce_help_command = "scalelab-cli bench allreduce --help";

void print_allreduce_table_header() {
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

// The GPUs --backend cuda measures: those --gpus lists, the first --devices, or every one.
GpuSelection select_gpus(const BenchAllReduceOptions& options) {
    const DeviceInventory inventory = discover_devices();
    if (!options.gpus.empty())
        return select_listed_gpus(options.gpus, inventory);
    if (options.devices_given)
        return select_first_gpus(options.devices, inventory);
    if (inventory.gpus.empty())
        return {.indices = {},
                .problems = {"--backend cuda measures NCCL between GPUs, but no GPU can be used "
                             "here: " +
                             inventory.no_gpu_reason + " (--backend cpu measures those)"}};
    return select_first_gpus(static_cast<int>(inventory.gpus.size()), inventory);
}

// The sizes measured by one call, so that rows appear as they are measured: one size at a time
// on CPU devices (large sizes take a while), all at once on GPUs (each call creates the NCCL
// communicators, which takes longer than measuring every size).
std::vector<std::vector<std::size_t>> size_batches(const BenchAllReduceOptions& options) {
    if (options.backend == AllReduceBackend::Cuda)
        return {options.sizes_bytes};
    std::vector<std::vector<std::size_t>> batches;
    for (std::size_t bytes : options.sizes_bytes)
        batches.push_back({bytes});
    return batches;
}

}  // namespace

int run_bench_allreduce_command(const std::vector<std::string>& args) {
    const ParsedBenchAllReduceOptions parsed = parse_bench_allreduce_options(args);
    const BenchAllReduceOptions& options = parsed.options;
    if (const auto done = start_bench(options, parsed.problems, bench_allreduce_help(),
                                      bench_allreduce_help_command))
        return *done;

    // CPU devices in processes mpirun or srun started together: one group of all of them,
    // process 0 printing the rows.
    const BenchProcesses joined = join_bench_processes(args, bench_allreduce_help_command);
    if (!joined.processes)
        return joined.exit_code;
    const std::shared_ptr<comm::ProcessGroup>& processes = joined.processes->group;
    const bool prints = joined.processes->leader();

    const bool on_gpus = options.backend == AllReduceBackend::Cuda;
    std::vector<int> gpus;
    if (on_gpus) {
        if (!joined.processes->alone())
            return prints ? report_problems({"the GPU all-reduce benchmark measures the GPUs of "
                                             "one process: start it without mpirun or srun"},
                                            bench_allreduce_help_command)
                          : exit_bad_input;
        GpuSelection selection = select_gpus(options);
        if (!selection.problems.empty())
            return report_problems(selection.problems, bench_allreduce_help_command);
        gpus = std::move(selection.indices);
    }
    const std::size_t ranks =
        on_gpus ? gpus.size() : std::size_t(options.devices) * std::size_t(processes->count());
    // Nothing to exchange (NCCL returns at once for one rank): the rows would read as a link
    // of absurd speed.
    if (ranks == 1)
        spdlog::warn(
            "one device: an all-reduce has nothing to exchange, so the times are the call's own "
            "cost and busbw is 0; measure 2 or more devices to see a link's bandwidth");
    if (!options.json && prints)
        print_allreduce_table_header();
    for (const std::vector<std::size_t>& sizes : size_batches(options)) {
        spdlog::debug("measuring all-reduce of {} sizes from {} bytes on {} {}", sizes.size(),
                      sizes.front(), on_gpus ? gpus.size() : std::size_t(options.devices),
                      on_gpus ? "GPUs" : "CPU devices");
        std::vector<comm::AllReduceRow> rows;
        if (const auto failed = measure_or_report(
                [&] {
                    rows = on_gpus ? run_gpu_allreduce_benchmark(gpus, sizes, options.iterations)
                                   : comm::run_allreduce_benchmark(options.devices, sizes,
                                                                   options.iterations, processes);
                },
                bench_allreduce_help_command))
            return *failed;
        for (const comm::AllReduceRow& row : rows) {
            if (!prints)
                continue;
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
