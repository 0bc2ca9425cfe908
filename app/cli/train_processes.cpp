#include "cli/train_processes.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include "cli/exit_codes.h"
#include "cli/interrupt_watcher.h"
#include "cli/report_problems.h"
#include "data/load.h"
#include "error.h"
#include "train/dataset_request.h"
#include "train/same_experiment.h"
#include "train/trainer.h"

namespace scalelab::cli {

std::optional<LaunchedProcesses> join_train_processes(const RunSpec& spec) {
    // A process that died is noticed within the run's collective timeout.
    return join_cli_processes(
        std::chrono::milliseconds(std::llround(std::max(1.0, spec.collective_timeout_s) * 1000.0)));
}

std::optional<int> refuse_different_experiments(const LaunchedProcesses& processes,
                                                const RunSpec& spec) {
    const std::string mismatch = experiment_mismatch(*processes.group, spec);
    if (mismatch.empty())
        return std::nullopt;
    if (!processes.leader())
        return exit_bad_input;  // process 0 says why, once
    return report_problems({"the processes were not started with the same experiment:\n" +
                            mismatch + "\nstart every process with the same flags and config file"},
                           "scalelab-cli train --help");
}

int train_as_follower(const RunSpec& spec, const LaunchedProcesses& processes) {
    const std::string prefix = follower_prefix(*processes.group);
    try {
        const data::TrainTest data = data::load_dataset(dataset_request(spec));
        MetricsSink silent;  // process 0 reports the run
        Trainer trainer(spec, data, silent);
        trainer.set_process_group(processes.group);
        InterruptWatcher interrupt_watcher([&trainer](int) { trainer.cancel(); });
        const RunEnd end = trainer.run();
        if (end.status == RunStatus::Failed || end.status == RunStatus::Diverged) {
            std::fprintf(stderr, "[%s] error: the run %s: %s\n", prefix.c_str(),
                         std::string(to_string(end.status)).c_str(), end.message.c_str());
            return end.status == RunStatus::Diverged ? exit_diverged : exit_failed;
        }
        return end.status == RunStatus::Cancelled ? exit_cancelled : exit_ok;
    } catch (const Error& error) {
        std::fprintf(stderr, "[%s] error: %s\n", prefix.c_str(), error.what());
        return exit_bad_input;
    }
}

}  // namespace scalelab::cli
