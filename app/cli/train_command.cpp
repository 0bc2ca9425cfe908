#include "cli/train_command.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <optional>

#include "cli/exit_codes.h"
#include "cli/interrupt_watcher.h"
#include "cli/log_setup.h"
#include "cli/metrics_jsonl_sink.h"
#include "cli/progress_printer.h"
#include "cli/report_problems.h"
#include "cli/sink_fanout.h"
#include "cli/train_options.h"
#include "data/load.h"
#include "error.h"
#include "train/dataset_request.h"
#include "train/trainer.h"

namespace scalelab::cli {

namespace {

constexpr const char* help_command = "scalelab-cli train --help";

int exit_code_for(RunStatus status) {
    switch (status) {
        case RunStatus::Finished:
        case RunStatus::ReachedTarget:
            return exit_ok;
        case RunStatus::Diverged:
            return exit_diverged;
        case RunStatus::Cancelled:
            return exit_cancelled;
        case RunStatus::Failed:
            return exit_failed;
    }
    return exit_failed;
}

void print_run_header(const RunSpec& spec, const data::TrainTest& data) {
    const data::Dataset& train = data.train;
    fmt::print(
        "training {} on {} ({} train / {} test images, {}x{}x{}): {} epoch{}, batch {}, "
        "lr {}, {} threads\n",
        spec.model, spec.dataset, train.count(), data.test.count(), train.channels, train.height,
        train.width, spec.epochs, spec.epochs == 1 ? "" : "s", spec.batch, spec.lr,
        spec.threads == 0 ? std::string("all") : std::to_string(spec.threads));
    std::fflush(stdout);
}

}  // namespace

int run_train_command(const std::vector<std::string>& args) {
    ParsedTrainOptions parsed = parse_train_options(args);
    const TrainOptions& options = parsed.options;
    if (options.help) {
        std::fputs(train_help().c_str(), stdout);
        return exit_ok;
    }
    setup_logging(options.log_level);
    for (const std::string& problem : options.spec.validate())
        parsed.problems.push_back(problem);
    if (!parsed.problems.empty())
        return report_problems(parsed.problems, help_command);
    const RunSpec& spec = options.spec;

    // Opened before the data loads, so that a wrong path is reported before minutes of work.
    std::optional<MetricsJsonlSink> metrics_file;
    if (!options.metrics_out.empty()) {
        try {
            metrics_file.emplace(options.metrics_out);
        } catch (const std::runtime_error& error) {
            return report_problems({std::string(error.what()) + " (check --metrics-out)"},
                                   help_command);
        }
    }

    data::TrainTest data;
    try {
        const auto start = std::chrono::steady_clock::now();
        data = data::load_dataset(dataset_request(spec));
        spdlog::info(
            "loaded {} in {:.2f} s", spec.dataset,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    } catch (const Error& error) {
        return report_error(error, help_command);
    }

    ProgressPrinter printer(stdout, spec, isatty(fileno(stdout)) == 1);
    std::vector<MetricsSink*> sinks{&printer};
    if (metrics_file)
        sinks.push_back(&*metrics_file);
    SinkFanout sink(sinks);

    std::optional<Trainer> trainer;
    try {
        trainer.emplace(spec, data, sink);
    } catch (const Error& error) {
        return report_error(error, help_command);
    }
    InterruptWatcher interrupt_watcher([&trainer] {
        spdlog::warn("interrupted: stopping before the next step (Ctrl-C again to quit now)");
        trainer->cancel();
    });
    print_run_header(spec, data);  // after the watcher: from this line on, Ctrl-C cancels
    const RunEnd end = trainer->run();
    return exit_code_for(end.status);
}

}  // namespace scalelab::cli
