#include "cli/bench_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <cstdio>

#include "cli/bench_options.h"
#include "cli/bench_sgemm_command.h"
#include "cli/exit_codes.h"
#include "cli/json_line.h"
#include "cli/log_setup.h"
#include "cli/report_problems.h"
#include "error.h"

namespace scalelab::cli {

namespace {

constexpr const char* help_command = "scalelab-cli bench train --help";

constexpr const char* bench_usage =
    "Usage:\n"
    "  scalelab-cli bench train [flags]  measure training throughput (images/s, GFLOP/s)\n"
    "  scalelab-cli bench sgemm [flags]  measure the fp32 matrix-multiply peak (GFLOP/s)\n"
    "\n"
    "Run 'scalelab-cli bench train --help' or 'scalelab-cli bench sgemm --help' for each\n"
    "one's flags.\n"
    "\n"
    "Examples:\n"
    "  scalelab-cli bench train --model cnn --batch 128 --threads 1\n"
    "  scalelab-cli bench sgemm --threads 1,2\n";

std::string model_label(const ThroughputConfig& config) {
    return config.model == "wrn" ? fmt::format("wrn-{}", config.width) : config.model;
}

void print_table_header() {
    fmt::print("{:<10} {:>6} {:>8} {:>12} {:>21} {:>9}\n", "model", "batch", "threads", "images/s",
               "(min-max)", "GFLOP/s");
}

void print_table_row(const ThroughputConfig& config, const ThroughputResult& result) {
    fmt::print("{:<10} {:>6} {:>8} {:>12.1f} {:>21} {:>9.1f}\n", model_label(config), config.batch,
               config.threads, result.images_per_s_median,
               fmt::format("({:.1f}-{:.1f})", result.images_per_s_min, result.images_per_s_max),
               result.gflops);
}

void print_json_row(const ThroughputConfig& config, const ThroughputResult& result) {
    const std::string row = JsonLine()
                                .add("model", config.model)
                                .add("width", config.width)
                                .add("batch", config.batch)
                                .add("threads", config.threads)
                                .add("channels", config.channels)
                                .add("image_size", config.image_size)
                                .add("images_per_s", result.images_per_s_median)
                                .add("images_per_s_min", result.images_per_s_min)
                                .add("images_per_s_max", result.images_per_s_max)
                                .add("flops_per_image", result.flops_per_image)
                                .add("gflops", result.gflops)
                                .str();
    std::puts(row.c_str());
}

int bench_train(const std::vector<std::string>& args) {
    const ParsedBenchTrainOptions parsed = parse_bench_train_options(args);
    const BenchTrainOptions& options = parsed.options;
    if (options.help) {
        std::fputs(bench_help().c_str(), stdout);
        return exit_ok;
    }
    if (!parsed.problems.empty())
        return report_problems(parsed.problems, help_command);
    setup_logging(options.log_level);

    if (!options.json)
        print_table_header();
    for (const std::string& model : options.models) {
        for (int batch : options.batches) {
            for (int threads : options.threads) {
                ThroughputConfig config = options.base;
                config.model = model;
                config.batch = batch;
                config.threads = threads;
                spdlog::debug("measuring {} at batch {} on {} threads", model, batch, threads);
                ThroughputResult result;
                try {
                    result = measure_training_throughput(config);
                } catch (const Error& error) {
                    report_problems({error.what()}, help_command);
                    return error.kind() == ErrorKind::Internal ? exit_failed : exit_bad_input;
                }
                if (options.json)
                    print_json_row(config, result);
                else
                    print_table_row(config, result);
                std::fflush(stdout);  // one row at a time: a sweep takes minutes
            }
        }
    }
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
    return report_problems({"bench measures 'train' or 'sgemm' (got '" + target +
                            "'): scalelab-cli bench train --model cnn --batch 128"},
                           "scalelab-cli bench --help");
}

}  // namespace scalelab::cli
