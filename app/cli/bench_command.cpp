#include "cli/bench_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <utility>

#include "backend/device_inventory.h"
#include "backend/gpu_selection.h"
#include "cli/bench_allreduce_command.h"
#include "cli/bench_common.h"
#include "cli/bench_options.h"
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

void print_table_row(const ThroughputConfig& config, const ThroughputResult& result) {
    fmt::print("{:<10} {:>6} {:>8} {:>8} {:>12.1f} {:>21} {:>9.1f}\n", model_label(config),
               config.batch, config.threads, config.devices, result.images_per_s_median,
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
    std::puts(row.str().c_str());
}

int bench_train(const std::vector<std::string>& args) {
    const ParsedBenchTrainOptions parsed = parse_bench_train_options(args);
    const BenchTrainOptions& options = parsed.options;
    if (const auto done =
            start_bench(options, parsed.problems, bench_help(), bench_train_help_command))
        return *done;

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
    if (!options.json)
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
                    if (options.device == DeviceKind::Gpu)
                        config.gpus.assign(gpus.begin(), gpus.begin() + devices);
                    spdlog::debug("measuring {} at batch {} on {} devices of {} threads", model,
                                  batch, devices, threads);
                    ThroughputResult result;
                    if (const auto failed =
                            measure_or_report([&] { result = measure_training_throughput(config); },
                                              bench_train_help_command))
                        return *failed;
                    if (options.json)
                        print_json_row(config, result);
                    else
                        print_table_row(config, result);
                    std::fflush(stdout);  // one row at a time: a sweep takes minutes
                    points.push_back(
                        {model_label(config), threads, devices, batch, result.images_per_s_median});
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
