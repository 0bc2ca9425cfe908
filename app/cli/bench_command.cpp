#include "cli/bench_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "backend/cpu/cpu_backend.h"
#include "backend/device_inventory.h"
#include "backend/gpu_selection.h"
#include "cli/bench_allreduce_command.h"
#include "cli/bench_common.h"
#include "cli/bench_options.h"
#include "cli/bench_processes.h"
#include "cli/bench_sgemm_command.h"
#include "cli/exit_codes.h"
#include "cli/json_line.h"
#include "cli/report_problems.h"
#include "cli/throughput_drops.h"
#include "quoted_text.h"
#include "time_breakdown.h"

namespace scalelab::cli {

namespace {

constexpr const char* bench_train_help_command = "scalelab-cli bench train --help";

constexpr const char* bench_usage =
    "Usage:\n"
    "  scalelab-cli bench train [flags]  measure training throughput (images/s, GFLOP/s)\n"
    "  scalelab-cli bench sgemm [flags]  measure the fp32 matrix-multiply peak (GFLOP/s)\n"
    "  scalelab-cli bench allreduce [flags]\n"
    "                                    measure the all-reduce between CPU devices (GB/s)\n"
    "\n"
    "Run 'scalelab-cli bench train --help' (or sgemm, allreduce) for each one's flags.\n"
    "\n"
    "Examples:\n"
    "  scalelab-cli bench train --model cnn --batch 128 --threads 1\n"
    "  scalelab-cli bench train --model cnn --batch 64 --threads 1 --devices 1,2\n"
    "  scalelab-cli bench sgemm --threads 1,2\n"
    "  scalelab-cli bench allreduce --devices 2 --sizes 1M,4M,16M,64M\n";

std::string model_label(const ThroughputConfig& config) {
    return config.model == "wrn" ? fmt::format("wrn-{}", config.width) : config.model;
}

void print_bench_table_header() {
    fmt::print("{:<10} {:>6} {:>8} {:>8} {:>12} {:>21} {:>9}\n", "model", "batch", "threads",
               "devices", "images/s", "(min-max)", "GFLOP/s");
}

int processes_of(const ThroughputConfig& config) {
    return config.processes ? config.processes->count() : 1;
}

// "2" in one process, "2x1" for 2 processes of 1 device.
std::string devices_label(const ThroughputConfig& config) {
    return processes_of(config) == 1 ? std::to_string(config.devices)
                                     : fmt::format("{}x{}", processes_of(config), config.devices);
}

void print_table_row(const ThroughputConfig& config, const ThroughputResult& result) {
    fmt::print("{:<10} {:>6} {:>8} {:>8} {:>12.1f} {:>21} {:>9.1f}\n", model_label(config),
               config.batch, config.threads, devices_label(config), result.images_per_s_median,
               fmt::format("({:.1f}-{:.1f})", result.images_per_s_min, result.images_per_s_max),
               result.gflops);
}

void print_json_row(const ThroughputConfig& config, const ThroughputResult& result) {
    JsonLine row = JsonLine()
                       .add("model", config.model)
                       .add("width", config.width)
                       .add("batch", config.batch)
                       .add("threads", config.threads)
                       .add("devices", config.devices)
                       .add("processes", processes_of(config))
                       .add("device", config.gpus.empty() ? "cpu" : "gpu")
                       .add("channels", config.channels)
                       .add("image_size", config.image_size)
                       .add("images_per_s", result.images_per_s_median)
                       .add("images_per_s_min", result.images_per_s_min)
                       .add("images_per_s_max", result.images_per_s_max)
                       .add("flops_per_image", result.flops_per_image)
                       .add("gflops", result.gflops);
    for (StepPhase phase : all_step_phases)
        row.add(std::string(step_phase_key(phase)) + "_ms",
                1e3 * phase_seconds(result.step, phase));
    row.add("between_processes_ms", 1e3 * result.step.between_processes);
    std::puts(row.str().c_str());
}

void print_row(const ThroughputConfig& config, const ThroughputResult& result, bool json) {
    if (json)
        print_json_row(config, result);
    else
        print_table_row(config, result);
    std::fflush(stdout);  // one row at a time: a sweep takes minutes
}

// Across processes, the anchor beside each row: the same devices in one process of this
// machine (process 0 measures it while the others wait; then every process learns whether it
// failed). Nothing to measure when the processes are on several hosts (one machine cannot hold
// the same run) or use GPUs (the other processes hold this machine's other GPUs), and not
// measured, with the reason, when process 0 may not use the cores the devices need (mpirun
// binds each process to its own cores by default): a comparison on fewer cores is unfair.
std::optional<int> measure_one_process_anchor(const ThroughputConfig& across,
                                              const ThroughputResult& result,
                                              const LaunchedProcesses& processes, bool json) {
    ThroughputConfig alone = across;
    alone.processes = nullptr;
    alone.devices = across.devices * processes.group->count();
    if (!processes.on_one_host() || !across.gpus.empty()) {
        if (processes.leader())
            spdlog::warn(
                "{}: measure the same run in one process with scalelab-cli bench train "
                "--devices {} on one machine",
                across.gpus.empty() ? "the processes run on several hosts"
                                    : "the other processes hold this machine's GPUs",
                alone.devices);
        return std::nullopt;
    }
    // Process 0's cores decide, for every process.
    float cores = float(cpu::available_cores());
    processes.group->broadcast(std::span<float>(&cores, 1), 0);
    if (int(cores) < alone.devices * alone.threads) {
        if (processes.leader())
            spdlog::warn(
                "the same run in one process needs {} cores and process 0 may use {} (mpirun "
                "binds each process to its own cores): start with --bind-to none to measure it "
                "beside the row above",
                alone.devices * alone.threads, int(cores));
        return std::nullopt;
    }
    std::optional<int> failed;
    if (processes.leader()) {
        ThroughputResult anchor;
        failed = measure_or_report([&] { anchor = measure_training_throughput(alone); },
                                   bench_train_help_command);
        if (!failed) {
            print_row(alone, anchor, json);
            if (!json)
                fmt::print("  {} processes reach {:.2f} of one process with the same devices\n",
                           processes.group->count(),
                           result.images_per_s_median / anchor.images_per_s_median);
        }
    }
    float outcome = failed ? float(*failed) : 0.0F;
    processes.group->broadcast(std::span<float>(&outcome, 1), 0);
    if (outcome != 0.0F)
        return int(outcome);
    return std::nullopt;
}

int bench_train(const std::vector<std::string>& args) {
    const ParsedBenchTrainOptions parsed = parse_bench_train_options(args);
    const BenchTrainOptions& options = parsed.options;
    if (const auto done =
            start_bench(options, parsed.problems, bench_help(), bench_train_help_command))
        return *done;
    // Started by mpirun or srun: every row spans the processes, process 0 printing.
    const BenchProcesses joined = join_bench_processes(args, bench_train_help_command);
    if (!joined.processes)
        return joined.exit_code;
    const LaunchedProcesses& processes = *joined.processes;

    // With GPUs, the first N for each device count N: checked once, for the largest, before
    // anything is measured.
    std::vector<int> gpus;
    if (options.device == DeviceKind::Gpu) {
        GpuSelection selection = select_first_gpus(
            *std::max_element(options.devices.begin(), options.devices.end()), discover_devices());
        if (!selection.problems.empty())
            return report_problems(selection.problems, bench_train_help_command);
        gpus = std::move(selection.indices);
    }
    if (!options.json && processes.leader())
        print_bench_table_header();
    std::vector<ThroughputPoint> points;
    for (const std::string& model : options.models) {
        for (int batch : options.batches) {
            for (int threads : options.threads) {
                for (int devices : options.devices) {
                    ThroughputConfig config = options.base;
                    config.model = model;
                    config.batch = batch;
                    config.threads = threads;
                    config.devices = devices;
                    config.processes = processes.group;
                    if (options.device == DeviceKind::Gpu)
                        config.gpus.assign(gpus.begin(), gpus.begin() + devices);
                    spdlog::debug("measuring {} at batch {} on {} devices of {} threads", model,
                                  batch, devices, threads);
                    ThroughputResult result;
                    if (const auto failed =
                            measure_or_report([&] { result = measure_training_throughput(config); },
                                              bench_train_help_command))
                        return *failed;
                    if (processes.leader())
                        print_row(config, result, options.json);
                    if (!processes.alone())
                        if (const auto failed =
                                measure_one_process_anchor(config, result, processes, options.json))
                            return *failed;
                    points.push_back({model_label(config), threads,
                                      devices * processes.group->count(), batch,
                                      result.images_per_s_median});
                }
            }
        }
    }
    for (const std::string& drop : throughput_drops(points))
        spdlog::warn(drop);
    return exit_ok;
}

}  // namespace

int run_bench_command(const std::vector<std::string>& args) {
    if (!args.empty() && (args.front() == "--help" || args.front() == "-h")) {
        std::fputs(bench_usage, stdout);
        return exit_ok;
    }
    const std::string target = args.empty() ? std::string() : args.front();
    const std::vector<std::string> rest =
        args.empty() ? std::vector<std::string>{}
                     : std::vector<std::string>(args.begin() + 1, args.end());
    if (target == "train")
        return bench_train(rest);
    if (target == "sgemm")
        return run_bench_sgemm_command(rest);
    if (target == "allreduce")
        return run_bench_allreduce_command(rest);
    return report_problems(
        {"bench measures 'train', 'sgemm' or 'allreduce' (got " + quoted_text(target) +
         "): scalelab-cli bench train --model cnn --batch 128"},
        "scalelab-cli bench --help");
}

}  // namespace scalelab::cli
