// scalelab-soak: the soak of issue 9 through the CLI's training path. One process trains a
// queue of short runs one after another as `scalelab-cli train --store FILE` trains one
// (cli::train_run: the store opened for the run, its recorder and recording guard, Ctrl-C), all
// into one new store. A run planned to be cancelled gets a Ctrl-C at its planned step. Then the
// soak checks every run's exit code and the store against the plan, and reports resident memory
// after the tenth and after the last run (soak_plan.h says what passes).

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <csignal>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "allocator_policy.h"
#include "cli/exit_codes.h"
#include "cli/train_command.h"
#include "data/load.h"
#include "run_store.h"
#include "soak_plan.h"
#include "train/dataset_request.h"

namespace {

using scalelab::RunState;
using scalelab::RunStore;
using scalelab::SoakRun;
using scalelab::StoreError;

// Presses Ctrl-C when the run reports its planned step, so that the run is cancelled the way a
// user cancels one: through the train command's interrupt watcher. The trainer reports steps
// from one thread, in order, so the signal is raised once (a second would end the process).
class InterruptAtStep final : public scalelab::MetricsSink {
  public:
    explicit InterruptAtStep(std::int64_t step) : step_(step) {}

    void on_step(const scalelab::StepMetrics& step) override {
        if (step.step == step_)
            std::raise(SIGINT);
    }

  private:
    const std::int64_t step_;  // 0: never
};

int planned_exit_code(RunState state) {
    switch (state) {
        case RunState::Finished:
            return scalelab::cli::exit_ok;
        case RunState::Diverged:
            return scalelab::cli::exit_diverged;
        case RunState::Cancelled:
            return scalelab::cli::exit_cancelled;
        default:
            return scalelab::cli::exit_failed;
    }
}

// Trains one planned run as the train command does, with the store opened for it as the command
// opens it; what went wrong when it did not end as planned.
std::optional<QString> train_planned(const SoakRun& run, int number, const QString& store_path) {
    const QString which = QStringLiteral("run %1").arg(number);
    scalelab::data::TrainTest data;
    std::unique_ptr<RunStore> store;
    try {
        data = scalelab::data::load_dataset(scalelab::dataset_request(run.spec));
        store = RunStore::open(store_path);
    } catch (const std::runtime_error& error) {  // scalelab::Error, StoreError
        return QStringLiteral("%1: %2").arg(which, QString::fromUtf8(error.what()));
    }
    InterruptAtStep interrupt(run.cancel_at_step);
    const scalelab::cli::TrainedRun trained = scalelab::cli::train_run(
        run.spec, data, {&interrupt}, store.get(), QStringLiteral("soak %1").arg(number));
    const int planned = planned_exit_code(run.expected);
    if (trained.exit_code == planned)
        return std::nullopt;
    return QStringLiteral("%1 exited with %2, planned %3 (%4)")
        .arg(which)
        .arg(trained.exit_code)
        .arg(planned)
        .arg(QString::fromUtf8(to_string(run.expected)));
}

}  // namespace

int main(int argc, char** argv) {
    scalelab::return_large_blocks_to_the_system();
    QCoreApplication app(argc, argv);
    const std::optional<scalelab::SoakOptions> options = scalelab::parse_soak_options(
        app, QStringLiteral("Trains a queue of short runs through the CLI's training path in one "
                            "process and checks their ends, the store and the memory."));
    if (!options)
        return scalelab::soak_bad_input;
    const QTemporaryDir folder;  // the store's, without --store
    const QString store_path =
        options->store.isEmpty() ? folder.filePath(QStringLiteral("soak.sqlite")) : options->store;

    const std::vector<SoakRun> plan = scalelab::soak_plan(options->runs, options->seed);
    scalelab::SoakOutcome outcome;
    QElapsedTimer wall;
    wall.start();
    for (std::size_t i = 0; i < plan.size(); ++i) {
        if (const auto problem = train_planned(plan[i], int(i + 1), store_path))
            outcome.problems.push_back(*problem);
        scalelab::record_memory(outcome);
    }
    outcome.wall_seconds = double(wall.elapsed()) / 1000.0;
    try {
        const std::unique_ptr<RunStore> store = RunStore::open(store_path);
        for (const QString& problem : scalelab::soak_store_problems(*store, plan))
            outcome.problems.push_back(problem);
    } catch (const StoreError& error) {
        outcome.problems.push_back(QString::fromUtf8(error.what()));
    }
    return scalelab::report_soak(outcome, stdout);
}
