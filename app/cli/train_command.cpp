#include "cli/train_command.h"

#include <QJsonDocument>

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <QDir>
#include <QStringList>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "cli/exit_codes.h"
#include "cli/interrupt_watcher.h"
#include "cli/log_setup.h"
#include "cli/metrics_jsonl_sink.h"
#include "cli/progress_printer.h"
#include "cli/recording_guard.h"
#include "cli/report_problems.h"
#include "cli/runs_command.h"
#include "cli/sink_fanout.h"
#include "cli/train_options.h"
#include "cli/train_outputs.h"
#include "cli/train_processes.h"
#include "data/load.h"
#include "error.h"
#include "initial_state.h"
#include "repeats.h"
#include "run_labels.h"
#include "run_recorder.h"
#include "run_spec_json.h"
#include "run_store.h"
#include "train/dataset_request.h"
#include "train/run_gpus.h"
#include "train/trainer.h"
#include "whole_file_writer.h"

namespace scalelab::cli {

namespace {

constexpr const char* train_help_command = "scalelab-cli train --help";
// What a run store's error adds: where to look, or how to do without one.
constexpr const char* train_store_advice = "check --store, or train with --no-store";

// `signal`: what cancelled the run (InterruptWatcher::received()), 0 for none.
int exit_code_for(RunStatus status, int signal) {
    switch (status) {
        case RunStatus::Finished:
        case RunStatus::ReachedTarget:
            return exit_ok;
        case RunStatus::Diverged:
            return exit_diverged;
        case RunStatus::Cancelled:
            return signal == SIGTERM ? exit_terminated : exit_cancelled;
        case RunStatus::Failed:
            return exit_failed;
    }
    return exit_failed;
}

void print_run_header(const RunSpec& spec, const data::TrainTest& data) {
    const data::Dataset& train = data.train;
    fmt::print(
        "training {} on {} ({} train / {} test images, {}x{}x{}): {} epoch{}, batch {}, "
        "lr {}, {}\n",
        spec.model, spec.dataset, train.count(), data.test.count(), train.channels, train.height,
        train.width, spec.epochs, spec.epochs == 1 ? "" : "s", spec.batch, spec.lr,
        spec.threads == 0
            ? std::string("all cores shared among the devices")
            : fmt::format("{} thread{} per device", spec.threads, spec.threads == 1 ? "" : "s"));
    std::fflush(stdout);
}

// Marks the run failed through the command's own connection. Best effort: the store may be
// what failed, and then the run shows as interrupted once this process is gone.
void record_failure(RunStore& store, std::int64_t run_id, const std::string& message) {
    try {
        store.mark_ended(run_id, RunState::Failed, QString::fromStdString(message));
    } catch (const StoreError& error) {
        spdlog::warn("could not record that the run failed: {}", error.what());
    }
}

// The run as a whole: every process's devices (each process trains its own).
RunSpec whole_run(RunSpec spec, int processes) {
    spec.devices *= processes;
    return spec;
}

QStringList tag_list(const std::vector<std::string>& tags) {
    QStringList list;
    for (const std::string& tag : tags)
        list.append(QString::fromStdString(tag));
    return list;
}

// A member of a group is "NAME (seed S)", NAME from --name or else the experiment ("mlp, 1 dev
// × 64, lr 0.1"), which names the group; a single run without --name is the store's "run <id>".
QString member_name(const TrainOptions& options, const RunSpec& spec) {
    const QString name = QString::fromStdString(options.name);
    if (options.repeats == 1)
        return name;
    return repeat_name(name.isEmpty() ? experiment_name(spec) : name, spec.seed, options.repeats);
}

// The group's line once its runs (store rows `ids`) have ended: "group mlp · seeds 0–2 (runs
// 4-6): 3 runs: 3 finished; best val acc 0.8970 ± 0.0030, images/s 1520 ± 12".
void print_group(const RunStore& store, const std::vector<std::int64_t>& ids) {
    if (ids.empty())
        return;
    std::vector<StoredRun> runs;
    for (const std::int64_t id : ids)
        runs.push_back(store.run(id));
    std::vector<const StoredRun*> members;
    for (const StoredRun& run : runs)
        members.push_back(&run);
    const auto [summary, label] = stored_group(members);
    fmt::print("group {} (runs {}-{}): {}; best val acc {}, images/s {}\n", label.toStdString(),
               members.front()->id, members.back()->id, group_ended_text(summary).toStdString(),
               figure_text(summary, summary.best_val_accuracy, 4).toStdString(),
               figure_text(summary, summary.images_per_s, 0).toStdString());
}

// Trains options.repeats runs one after another, each printing what a single run prints, then
// the group's line. Returns the first exit code other than exit_ok; a run that fails or is
// cancelled ends the launch (the next would fail alike, or was not wanted), a diverged one
// does not: divergence over seeds is what repeats measure.
int train_repeats(const TrainOptions& options, const data::TrainTest& data,
                  const std::vector<MetricsSink*>& sinks, RunStore* store,
                  const LaunchedProcesses& processes) {
    const QString group = options.repeats > 1 ? new_group_id() : QString();
    int exit_code = exit_ok;
    std::vector<std::int64_t> recorded;
    for (const RunSpec& spec : repeat_specs(options.spec, options.repeats)) {
        if (options.repeats > 1)
            fmt::print("seed {} ({} of {})\n", spec.seed, spec.seed - options.spec.seed + 1,
                       options.repeats);
        const TrainedRun trained = train_run(spec, data, sinks, store, member_name(options, spec),
                                             tag_list(options.tags), group, processes.group);
        const int code = trained.exit_code;
        if (trained.store_id != 0)
            recorded.push_back(trained.store_id);
        if (exit_code == exit_ok)
            exit_code = code;
        if (code != exit_ok && code != exit_diverged)
            break;
    }
    if (!group.isEmpty() && store)
        print_group(*store, recorded);
    return exit_code;
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
    // The GPUs before the store and the data: a run that no GPU here can take is refused at once
    // and leaves no failed run in the store.
    if (parsed.problems.empty() && options.spec.device == DeviceKind::Gpu)
        for (std::string& problem : select_run_gpus(options.spec, discover_devices()).problems)
            parsed.problems.push_back(std::move(problem));
    for (std::string& problem : train_output_problems(options))
        parsed.problems.push_back(std::move(problem));
    if (!parsed.problems.empty())
        return report_problems(parsed.problems, train_help_command);
    const RunSpec& spec = options.spec;

    // Started by mpirun or srun with others: one run together, process 0 in charge of output.
    const std::optional<LaunchedProcesses> processes = join_train_processes(spec);
    if (!processes)
        return exit_failed;
    if (!processes->alone()) {
        if (options.repeats > 1)
            return report_problems({"--repeats trains its runs one after another in one process: "
                                    "start it without mpirun or srun, or train one run"},
                                   train_help_command);
        if (const std::optional<int> refused = refuse_different_experiments(*processes, spec))
            return *refused;
        if (!processes->leader())
            return train_as_follower(spec, *processes);
    }

    std::unique_ptr<RunStore> store;
    if (!options.no_store) {
        try {
            store = RunStore::open(options.store.empty() ? RunStore::default_path()
                                                         : QString::fromStdString(options.store));
            store->require_sound();
        } catch (const StoreError& error) {
            return report_store_error(error, train_help_command, train_store_advice);
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
        return report_error(error, train_help_command);
    }

    if (!options.save_initial.empty()) {
        const QString path = QString::fromStdString(options.save_initial);
        const Shape image{1, data.train.channels, data.train.height, data.train.width};
        if (const QString reason = write_initial_state(spec, image, path); !reason.isEmpty())
            return report_problems(
                {cannot_write_message(path, reason).toStdString() + " (check --save-initial)"},
                train_help_command);
        spdlog::info("wrote the initial parameters and buffers to {}", options.save_initial);
    }

    // Opened (and an older file of that name replaced) once nothing can refuse the run any
    // more: the store, the data and the initial state are there. train_output_problems found a
    // wrong path before anything was read. Rows are appended as the run goes, not written to a
    // temporary file renamed at the end, so that a reader can follow the file (tail -f, the
    // window's Follow) while the run trains.
    std::optional<MetricsJsonlSink> metrics_file;
    if (!options.metrics_out.empty()) {
        try {
            const RunSpec whole = whole_run(spec, processes->group->count());
            metrics_file.emplace(options.metrics_out, QJsonDocument(run_spec_to_json(whole))
                                                          .toJson(QJsonDocument::Compact)
                                                          .toStdString());
        } catch (const std::runtime_error& error) {
            return report_problems({std::string(error.what()) + " (check --metrics-out)"},
                                   train_help_command);
        }
    }

    ProgressPrinter printer(stdout, spec, isatty(fileno(stdout)) == 1);
    std::vector<MetricsSink*> sinks{&printer};
    if (metrics_file)
        sinks.push_back(&*metrics_file);
    if (!processes->alone())
        fmt::print("{}\n", processes->layout(spec.devices));
    const int exit_code = train_repeats(options, data, sinks, store.get(), *processes);
    // A metrics file that could not be written whole is a failure, whatever the run did.
    if (metrics_file && metrics_file->failure()) {
        std::fprintf(stderr, "error: %s\n", metrics_file->failure()->c_str());
        return exit_code == exit_ok ? exit_failed : exit_code;
    }
    return exit_code;
}

TrainedRun train_run(const RunSpec& spec, const data::TrainTest& data,
                     std::vector<MetricsSink*> sinks, RunStore* store, const QString& name,
                     const QStringList& tags, const QString& group,
                     std::shared_ptr<comm::ProcessGroup> processes) {
    // The run is created once its data is there, so that a wrong dataset leaves no run behind.
    std::int64_t run_id = 0;
    std::optional<RunRecorder> recorder;
    if (store) {
        try {
            run_id = store->create_run(whole_run(spec, processes ? processes->count() : 1), name,
                                       tags, group);
        } catch (const StoreError& error) {
            return {report_store_error(error, train_help_command, train_store_advice), 0};
        }
        recorder.emplace(store->path(), run_id);
        sinks.push_back(&*recorder);
    }
    SinkFanout fanout(sinks);
    std::optional<RecordingGuard> guard;
    if (recorder)
        guard.emplace(fanout, *recorder);
    MetricsSink& sink = guard ? static_cast<MetricsSink&>(*guard) : fanout;

    std::optional<Trainer> trainer;
    try {
        trainer.emplace(spec, data, sink);
    } catch (const Error& error) {
        // The store keeps what happened to the run it listed: it failed before its first step.
        if (store)
            record_failure(*store, run_id, error.what());
        return {report_error(error, train_help_command), run_id};
    }
    const bool alone = !processes || processes->count() == 1;
    trainer->set_process_group(std::move(processes));
    if (guard)
        guard->guard(*trainer);
    InterruptWatcher interrupt_watcher([&trainer, alone](int signal) {
        // Across processes the run stops at once (Trainer::cancel); launchers end every process
        // with SIGTERM when the job is cancelled and when one of its processes fails.
        spdlog::warn("{}: {}", signal == SIGTERM ? "terminated" : "interrupted",
                     alone ? "stopping before the next step (the same signal again quits now)"
                           : "stopping every process's part of the run now (when one process "
                             "fails, the launcher stops the others: its message names it)");
        trainer->cancel();
    });
    print_run_header(spec, data);  // after the watcher: from this line on, Ctrl-C cancels
    const RunEnd end = trainer->run();
    if (!recorder)
        return {exit_code_for(end.status, interrupt_watcher.received()), 0};

    recorder->flush();
    if (const auto reason = recorder->failure()) {
        const std::string message = reason->toStdString();
        record_failure(*store, run_id, message);
        std::fprintf(stderr, "error: %s\n", message.c_str());
        return {exit_failed, run_id};
    }
    fmt::print("recorded as run {} in {} (scalelab-cli runs show {})\n", run_id,
               QDir::toNativeSeparators(store->path()).toStdString(), run_id);
    return {exit_code_for(end.status, interrupt_watcher.received()), run_id};
}

}  // namespace scalelab::cli
