#pragma once

// Prepared runs for the chart tests: started RunRecords with whole curves, built without
// training anything; and the chart grid they are added to.

#include <QString>
#include <QTest>

#include <cmath>

#include "chart_grid.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_record.h"

namespace scalelab::testing {

inline constexpr int test_global_batch = 64;
inline constexpr double test_step_seconds = 0.01;

// A run of `steps` steps, `steps_per_epoch` to an epoch, with a wiggling loss that falls from
// about 2, a learning rate of 0.1 (rising from 0.01 over `warmup_epochs` when set), a steady
// 6400 images/s, and one validation accuracy per whole epoch.
inline RunRecord chart_test_run(const QString& name, int steps, int steps_per_epoch = 100,
                                double warmup_epochs = 0.0) {
    RunRecord run;
    run.name = name;
    run.state = RunState::Finished;
    run.started = true;
    run.spec.warmup_length = warmup_epochs;
    run.spec.warmup_unit = WarmupUnit::Epochs;
    run.info.global_batch = test_global_batch;
    run.info.steps_per_epoch = steps_per_epoch;
    const double warmup_steps = warmup_epochs * steps_per_epoch;
    for (int step = 1; step <= steps; ++step) {
        const int epoch = (step - 1) / steps_per_epoch + 1;
        const double samples = double(step) * test_global_batch;
        const double seconds = step * test_step_seconds;
        const auto add = [&](Metric metric, double value) {
            run.curve(metric).push_back(MetricPoint{step, epoch, samples, seconds, value});
        };
        add(Metric::TrainLoss, 2.0 / std::sqrt(double(step)) + 0.1 * std::sin(step * 0.7));
        add(Metric::LearningRate, step < warmup_steps ? 0.01 + 0.09 * step / warmup_steps : 0.1);
        add(Metric::ImagesPerSecond, 6400.0 + 50.0 * std::sin(step * 1.3));
        if (step % steps_per_epoch == 0)
            run.curve(Metric::ValAccuracy)
                .push_back(MetricPoint{step, epoch, samples, seconds, 1.0 - 0.5 / epoch});
        run.step = step;
        run.epoch = epoch;
    }
    return run;
}

// A chart grid over a run collection of its own, made afresh for each test function so that no
// test sees another's runs. Its parts are destroyed in reverse order: grid, runs, controller.
struct ChartTestGrid {
    RunController controller;
    RunCollection runs{controller};
    ChartGrid grid{runs};

    // Shown at 1200 x 800, as in the window: each chart lays itself out for its size. False
    // when the grid's window is not exposed.
    bool showLaidOut() {
        grid.resize(1200, 800);
        grid.show();
        return QTest::qWaitForWindowExposed(&grid);
    }
};

}  // namespace scalelab::testing
