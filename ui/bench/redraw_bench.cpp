// scalelab-ui-bench: how long the chart grid takes to redraw with many long runs on screen, and
// how long the window would leave input unanswered while those runs update live.
//
//   scalelab-ui-bench [--runs 20] [--steps 10000] [--redraws 20] [--live-seconds 5]
//                     [--screenshot grid.png] [--dark]
//
// (a) Full redraw: every run dirty, ChartGrid::redrawNow() (curves rebuilt, smoothed, decimated
//     and handed to the charts) plus the paint that shows them (pending events, then repaint()).
// (b) Live: every 10 ms all runs (then one run) report new curves, as training runs would; the
//     grid redraws through its normal 50 ms timer while a 5 ms timer records the longest gap
//     between its ticks: the longest time the window would not have answered input.
// (c) One redraw and paint with one run changed: the live case, as runs train one at a time.
//
// RunCollection has no public way to append points, so runs report through its curvesChanged
// signal over curves of a fixed length: each redraw does the work of a run of that length.

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <numbers>
#include <random>
#include <vector>

#include "chart_grid.h"
#include "run_collection.h"
#include "run_controller.h"

namespace {

using namespace scalelab;

constexpr int steps_per_epoch = 500;
constexpr int batch_per_device = 128;

// A finished-looking run of `steps` steps on `devices` devices: a noisy loss falling from 2.3,
// a validation accuracy per epoch, a noisy images/s, and a learning rate with two epochs of
// linear warm-up then cosine decay.
RunRecord synthetic_run(int index, int steps) {
    std::mt19937 random(unsigned(index) + 1);
    std::normal_distribution<double> noise(0.0, 1.0);
    const int devices = 1 << (index % 4);

    RunRecord run;
    run.name = QStringLiteral("run %1 (%2 device%3)")
                   .arg(index + 1)
                   .arg(devices)
                   .arg(devices == 1 ? "" : "s");
    run.state = RunState::Finished;
    run.started = true;
    run.spec.devices = devices;
    run.spec.batch = batch_per_device;
    run.spec.warmup_length = 2.0;
    run.spec.warmup_unit = WarmupUnit::Epochs;
    run.info.devices = devices;
    run.info.global_batch = devices * batch_per_device;
    run.info.steps_per_epoch = steps_per_epoch;

    const double images_per_s = 900.0 * devices * (1.0 - 0.05 * index / 20.0);
    const double step_seconds = run.info.global_batch / images_per_s;
    const double warmup_steps = 2.0 * steps_per_epoch;
    const double decay = 0.25 + 0.02 * index;
    for (int step = 1; step <= steps; ++step) {
        const int epoch = (step - 1) / steps_per_epoch + 1;
        const double samples = double(step) * run.info.global_batch;
        run.train_seconds += step_seconds;
        const auto add = [&](Metric metric, double value) {
            run.curve(metric).push_back(
                MetricPoint{step, epoch, samples, run.train_seconds, value});
        };
        const double progress = double(step) / steps;
        const double loss = 0.2 + 2.1 * std::exp(-progress / decay);
        add(Metric::TrainLoss, std::max(0.01, loss * (1.0 + 0.15 * noise(random))));
        add(Metric::ImagesPerSecond, images_per_s * (1.0 + 0.03 * noise(random)));
        const double peak = 0.1 * devices;
        add(Metric::LearningRate,
            step < warmup_steps ? peak * (0.1 + 0.9 * step / warmup_steps)
                                : peak * 0.5 *
                                      (1.0 + std::cos(std::numbers::pi * (step - warmup_steps) /
                                                      std::max(1.0, steps - warmup_steps))));
        if (step % steps_per_epoch == 0)
            add(Metric::ValAccuracy, 0.93 - 0.6 * std::exp(-progress / decay) -
                                         0.01 * index / 20.0 + 0.005 * noise(random));
        run.step = step;
        run.epoch = epoch;
    }
    return run;
}

struct Figures {
    double min = 0;
    double median = 0;
    double max = 0;
};

Figures figures(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    return {values.front(), values[values.size() / 2], values.back()};
}

void print(const char* name, const std::vector<double>& values) {
    const Figures f = figures(values);
    std::printf("%s min=%.1f median=%.1f max=%.1f\n", name, f.min, f.median, f.max);
}

int positive_option(const QCommandLineParser& parser, const QString& name) {
    bool ok = false;
    const int value = parser.value(name).toInt(&ok);
    if (!ok || value <= 0) {
        std::fprintf(stderr, "--%s must be a whole number above 0, got '%s'\n", qPrintable(name),
                     qPrintable(parser.value(name)));
        std::exit(2);
    }
    return value;
}

}  // namespace

int main(int argc, char** argv) {
    QApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription("Chart redraw benchmark for ScaleLab's main window.");
    parser.addHelpOption();
    parser.addOption({"runs", "Runs on the charts.", "count", "20"});
    parser.addOption({"steps", "Steps of every run.", "count", "10000"});
    parser.addOption({"redraws", "Full redraws timed.", "count", "20"});
    parser.addOption({"live-seconds", "How long the live phase lasts.", "seconds", "5"});
    parser.addOption(
        {"screenshot", "Save a picture of the grid to this PNG file and stop.", "file"});
    parser.addOption({"dark", "Dark theme."});
    parser.process(app);
    const int run_count = positive_option(parser, "runs");
    const int steps = positive_option(parser, "steps");
    const int redraws = positive_option(parser, "redraws");
    const int live_seconds = positive_option(parser, "live-seconds");

    RunController controller;
    RunCollection runs(controller);
    ChartGrid grid(runs);
    for (int i = 0; i < run_count; ++i)
        runs.add(synthetic_run(i, steps));
    grid.resize(1600, 1000);
    grid.show();
    app.processEvents();
    grid.setDarkTheme(parser.isSet("dark"));
    grid.redrawNow();
    app.processEvents();
    if (parser.isSet("screenshot")) {
        const QString path = parser.value("screenshot");
        if (!grid.grab().save(path)) {
            std::fprintf(stderr, "could not write %s\n", qPrintable(path));
            return 1;
        }
        return 0;
    }

    std::printf("platform=%s runs=%d steps=%d\n", qPrintable(QGuiApplication::platformName()),
                run_count, steps);

    // (a) Full redraws. The collection's own signal marks every run dirty, as new steps would.
    const auto mark_all_dirty = [&] {
        for (const int id : runs.ids())
            emit runs.curvesChanged(id);
    };
    std::vector<double> update_ms;
    std::vector<double> paint_ms;
    std::vector<double> total_ms;
    for (int i = 0; i < redraws; ++i) {
        mark_all_dirty();
        QElapsedTimer clock;
        clock.start();
        grid.redrawNow();
        const double updated = clock.nsecsElapsed() / 1e6;
        app.processEvents();
        grid.repaint();
        app.processEvents();
        const double total = clock.nsecsElapsed() / 1e6;
        update_ms.push_back(updated);
        paint_ms.push_back(total - updated);
        total_ms.push_back(total);
    }
    print("redraw_ms", total_ms);
    print("  series_update_ms", update_ms);
    print("  paint_ms", paint_ms);

    // (b) Live updates through the grid's own timer, with a 5 ms timer standing in for input:
    // first every run reporting new points (the worst case), then only the first (runs train one
    // after another; the others' curves stay in the charts' cached layer).
    const auto live = [&](const char* name, const std::vector<int>& live_runs) {
        QTimer feed;
        feed.setInterval(10);
        QObject::connect(&feed, &QTimer::timeout, [&] {
            for (const int id : live_runs)
                emit runs.curvesChanged(id);
        });
        QElapsedTimer since_tick;
        double longest_gap_ms = 0;
        QTimer probe;
        probe.setTimerType(Qt::PreciseTimer);
        probe.setInterval(5);
        QObject::connect(&probe, &QTimer::timeout, [&] {
            longest_gap_ms = std::max(longest_gap_ms, since_tick.nsecsElapsed() / 1e6);
            since_tick.restart();
        });
        // A loop of its own each time: QCoreApplication::quit() would also close the window.
        const auto run_for = [](int ms) {
            QEventLoop loop;
            QTimer::singleShot(ms, &loop, &QEventLoop::quit);
            loop.exec();
        };
        // The first redraws of a phase move the runs that stopped changing into the charts'
        // cached layer (one full paint); the figures are taken after that.
        feed.start();
        run_for(500);
        const int redraws_before = grid.redrawCount();
        probe.start();
        since_tick.start();
        run_for(live_seconds * 1000);
        std::printf("%s: live_redraws_per_s=%.1f longest_event_loop_stall_ms=%.1f\n", name,
                    double(grid.redrawCount() - redraws_before) / live_seconds, longest_gap_ms);
    };
    live("all runs live", runs.ids());
    live("one run live", {runs.ids().front()});

    // (c) One redraw with one run changed, as in (b)'s second half, painted at once.
    std::vector<double> one_run_ms;
    for (int i = 0; i < redraws; ++i) {
        emit runs.curvesChanged(runs.ids().front());
        QElapsedTimer clock;
        clock.start();
        grid.redrawNow();
        app.processEvents();
        grid.repaint();
        app.processEvents();
        one_run_ms.push_back(clock.nsecsElapsed() / 1e6);
    }
    print("one_run_redraw_ms", one_run_ms);
    return 0;
}
