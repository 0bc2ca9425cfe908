// scalelab-ui-soak: the soak of issue 9 in the window. The window, as main() builds it, on a new
// run store, shown (offscreen with QT_QPA_PLATFORM=offscreen); the plan's runs are queued in its
// run collection at once, as a sweep is, and a run planned to be cancelled is stopped as the
// Stop action stops it once the collection shows its planned step. When every run has ended,
// the soak checks their states in the collection and in the store against the plan, and reports
// resident memory after the tenth and after the last run (soak_plan.h says what passes).

#include <QApplication>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "allocator_policy.h"
#include "backend/device_inventory.h"
#include "chart_grid.h"
#include "main_window.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_store.h"
#include "soak_plan.h"

namespace {

using scalelab::RunCollection;
using scalelab::RunRecord;
using scalelab::RunStore;
using scalelab::SoakRun;

// Far longer than the plan's runs take, cancelled ones included: a soak that hangs ends FAIL.
constexpr int seconds_per_run_at_most = 20;
constexpr int redraw_wait_ms = 5000;

// The heap the window holds for showing the runs on its charts and views: what hiding them all
// frees. Memory that grows by this much as runs end is data on show, not a leak.
double heap_held_for_shown_runs_mib(RunCollection& runs, scalelab::MainWindow& window) {
    const double shown = double(scalelab::heap_in_use_bytes());
    QEventLoop redrawn;
    QObject::connect(&window.charts(), &scalelab::ChartGrid::redrawn, &redrawn, &QEventLoop::quit);
    QTimer::singleShot(redraw_wait_ms, &redrawn, &QEventLoop::quit);
    for (const int id : runs.ids())
        runs.setVisible(id, false);
    redrawn.exec();
    return (shown - double(scalelab::heap_in_use_bytes())) / (1024.0 * 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
    scalelab::return_large_blocks_to_the_system();
    QApplication app(argc, argv);
    const std::optional<scalelab::SoakOptions> options = scalelab::parse_soak_options(
        app, QStringLiteral("Queues short runs in the window (offscreen) and checks their ends, "
                            "the store and the memory."));
    if (!options)
        return scalelab::soak_bad_input;
    const QTemporaryDir folder;  // the store's, without --store
    const QString store_path =
        options->store.isEmpty() ? folder.filePath(QStringLiteral("soak.sqlite")) : options->store;

    const std::vector<SoakRun> plan = scalelab::soak_plan(options->runs, options->seed);
    scalelab::SoakOutcome outcome;

    scalelab::RunController controller;
    RunCollection runs(controller);
    try {
        runs.setStore(RunStore::open(store_path));
    } catch (const scalelab::StoreError& error) {
        std::fprintf(stderr, "error: %s\n", error.what());
        return scalelab::soak_bad_input;
    }
    QObject::connect(&runs, &RunCollection::storeError, &app,
                     [&outcome](const QString& message) { outcome.problems.push_back(message); });
    scalelab::MainWindow window(runs, scalelab::discover_devices());
    window.show();

    std::vector<scalelab::RunSpec> specs;
    std::vector<QString> names;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        specs.push_back(plan[i].spec);
        names.push_back(QStringLiteral("soak %1").arg(i + 1));
    }
    QElapsedTimer wall;
    wall.start();
    const std::vector<int> ids = runs.enqueue(specs, names);
    if (ids.size() != plan.size()) {
        outcome.problems.push_back(
            QStringLiteral("%1 of %2 runs were queued").arg(ids.size()).arg(plan.size()));
        return scalelab::report_soak(outcome, stdout);
    }

    std::set<int> stopped;
    std::set<int> ended;
    const auto follow = [&](int id) {
        const auto at = std::find(ids.begin(), ids.end(), id);
        const RunRecord* run = runs.find(id);
        if (at == ids.end() || run == nullptr || ended.contains(id))
            return;
        const SoakRun& planned = plan[std::size_t(at - ids.begin())];
        if (planned.cancel_at_step > 0 && run->step >= planned.cancel_at_step &&
            stopped.insert(id).second)
            runs.stop(id);
        if (is_active(run->state))
            return;
        ended.insert(id);
        scalelab::record_memory(outcome);
        if (ended.size() == ids.size())
            app.quit();
    };
    QObject::connect(&runs, &RunCollection::runChanged, &app, follow);
    QObject::connect(&runs, &RunCollection::curvesChanged, &app, follow);
    QTimer::singleShot(options->runs * seconds_per_run_at_most * 1000, &app, [&] {
        outcome.problems.push_back(QStringLiteral("only %1 of %2 runs had ended after %3 s")
                                       .arg(ended.size())
                                       .arg(ids.size())
                                       .arg(wall.elapsed() / 1000));
        app.quit();
    });
    app.exec();
    outcome.wall_seconds = double(wall.elapsed()) / 1000.0;

    for (std::size_t i = 0; i < ids.size(); ++i) {
        const RunRecord* run = runs.find(ids[i]);
        if (run->state != plan[i].expected)
            outcome.problems.push_back(QStringLiteral("run %1 is %2 in the window, planned %3")
                                           .arg(i + 1)
                                           .arg(QString::fromUtf8(to_string(run->state)),
                                                QString::fromUtf8(to_string(plan[i].expected))));
    }
    try {
        const std::unique_ptr<RunStore> store = RunStore::open(store_path);
        for (const QString& problem : scalelab::soak_store_problems(*store, plan))
            outcome.problems.push_back(problem);
    } catch (const scalelab::StoreError& error) {
        outcome.problems.push_back(QString::fromUtf8(error.what()));
    }
    std::printf("heap held for the %zu runs shown: %.1f MiB (what hiding them frees)\n", ids.size(),
                heap_held_for_shown_runs_mib(runs, window));
    return scalelab::report_soak(outcome, stdout);
}
