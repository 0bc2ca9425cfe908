// scalelab-table-bench: how long the run table takes to open on a run store of many repeats:
// the store's runs listed, the table model built, and the view shown and painted once.
//
//   scalelab-table-bench [--runs 500] [--groups 100] [--store FILE]
//
// The store is filled first (not timed) with `runs` finished runs of a few epochs each, in
// `groups` groups of repeats, in a temporary folder unless --store names a file to keep.

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QTemporaryDir>

#include <cstdio>
#include <memory>

#include "run_collection.h"
#include "run_controller.h"
#include "run_store.h"
#include "run_table_model.h"
#include "run_table_view.h"

namespace {

using namespace scalelab;

constexpr int epochs = 5;
constexpr int steps_per_epoch = 20;

// A finished run of repeats `group`, seed `seed`: per-step curves and one validation point per
// epoch, its accuracy varying a little with the seed.
RunRecord repeat_run(int group, int seed) {
    RunRecord run;
    run.name = QStringLiteral("lr %1 (seed %2)").arg(0.05 * (group + 1)).arg(seed);
    run.group = QStringLiteral("bench-group-%1").arg(group);
    run.state = RunState::Finished;
    run.started = true;
    run.spec.devices = 1 << (group % 3);
    run.spec.lr = 0.05 * (group + 1);
    run.spec.seed = std::uint64_t(seed);
    run.spec.epochs = epochs;
    run.spec.targets = {0.85};
    run.info.devices = run.spec.devices;
    run.info.cores = 4;
    run.info.global_batch = run.spec.devices * run.spec.batch;
    run.info.steps_per_epoch = steps_per_epoch;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
        for (int step = 0; step < steps_per_epoch; ++step) {
            ++run.step;
            run.train_seconds += 0.05;
            const MetricPoint point{run.step, epoch, double(run.step * run.info.global_batch),
                                    run.train_seconds, 1.0 / double(run.step)};
            run.curve(Metric::TrainLoss).push_back(point);
            run.curve(Metric::ImagesPerSecond)
                .push_back({point.step, epoch, point.samples, point.seconds, 2000.0 + seed});
        }
        const double accuracy = 0.8 + 0.02 * epoch + 0.001 * ((seed * 7 + group) % 5);
        run.curve(Metric::ValAccuracy)
            .push_back({run.step, epoch, double(run.step * run.info.global_batch),
                        run.train_seconds, accuracy});
        run.epoch = epoch;
    }
    return run;
}

void fill(const QString& path, int runs, int groups) {
    RunController controller;
    RunCollection collection(controller);
    collection.setStore(RunStore::open(path, StoreAccess::CreateIfMissing));
    for (int r = 0; r < runs; ++r)
        collection.add(repeat_run(r % groups, 1 + r / groups));
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Measures how long the run table takes to open on a store of repeats."));
    parser.addHelpOption();
    const QCommandLineOption runs_option(QStringLiteral("runs"), QStringLiteral("Stored runs."),
                                         QStringLiteral("N"), QStringLiteral("500"));
    const QCommandLineOption groups_option(QStringLiteral("groups"),
                                           QStringLiteral("Groups of repeats."),
                                           QStringLiteral("N"), QStringLiteral("100"));
    const QCommandLineOption store_option(QStringLiteral("store"),
                                          QStringLiteral("Fill and keep this store file."),
                                          QStringLiteral("FILE"));
    parser.addOptions({runs_option, groups_option, store_option});
    parser.process(app);
    const int runs = parser.value(runs_option).toInt();
    const int groups = parser.value(groups_option).toInt();
    if (runs < 1 || groups < 1 || groups > runs) {
        std::fprintf(stderr,
                     "scalelab-table-bench: --runs and --groups take 1 <= groups <= runs\n");
        return 2;
    }
    QTemporaryDir folder;
    const QString path = parser.isSet(store_option)
                             ? parser.value(store_option)
                             : folder.filePath(QStringLiteral("runs.sqlite"));
    fill(path, runs, groups);

    QElapsedTimer clock;
    clock.start();
    RunController controller;
    RunCollection collection(controller);
    collection.setStore(RunStore::open(path));
    const double listed = double(clock.nsecsElapsed()) / 1e6;
    RunTableModel model(collection);
    RunTableView view(collection, model);
    view.resize(1500, 400);
    view.show();
    QApplication::processEvents();
    view.repaint();
    const double opened = double(clock.nsecsElapsed()) / 1e6;
    std::printf(
        "run table: %d stored runs in %d groups (%d top-level rows): listed in %.0f ms, "
        "listed + model + view shown and painted in %.0f ms\n",
        runs, groups, model.rowCount(), listed, opened);
    return 0;
}
