// scalelab-ui-bench: how long the chart grid takes to redraw with many long runs on screen, and
// how long the window would leave input unanswered while those runs update live.
//
//   scalelab-ui-bench [--runs 20] [--steps 10000] [--redraws 20] [--live-seconds 5]
//                     [--seeds 1] [--band std|minmax|off] [--screenshot grid.png] [--dark]
//
// With --seeds N > 1 the runs come in groups of N repeats (RunRecord::group: the same
// configuration over N seeds), drawn as their mean with a band (--band; ± 1 standard deviation
// unless told otherwise): --runs 100 --seeds 5 is 20 groups of 5 runs.
//
// (a) Full redraw: every run dirty, ChartGrid::redrawNow() (curves rebuilt, smoothed, decimated
//     and handed to the charts) plus the paint that shows them (pending events, then repaint()):
//     with the data unchanged (the grid's and charts' caches hold), and with every run a step
//     further (nothing cached: every curve computed and painted again).
// (b) Live: every 10 ms all runs (then one run) train a step and report it; the grid redraws
//     through its normal 50 ms timer while a 5 ms timer records the longest gap between its
//     ticks: the longest time the window would not have answered input.
// (c) One redraw and paint with one run a step further: the live case (runs train one at a
//     time).
//
// Runs that train (the second half of (a), (b), (c)) get one step more each time they report.
// The grid keeps a group's curves while its members' point counts hold, and the charts do not
// repaint a series given again unchanged: (a)'s first half measures a redraw that finds nothing
// new, its second the one where every curve is computed and painted again. RunController trains
// one run at a time, so (c) is the live case of the app, and every run training at once a
// worst case it does not reach (a smoothing or x-axis change recomputes every curve once).

#include <QApplication>
#include <QCommandLineParser>
#include <QElapsedTimer>
#include <QEventLoop>
#include <QTimer>

#include <algorithm>
#include <cmath>
#include <cstdint>
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
// linear warm-up then cosine decay. Configuration `index` sets its devices and curves' shape,
// `seed` its noise; with `seeds` > 1 it is in group `index` (named so, for the legend).
RunRecord synthetic_run(int index, int seed, int seeds, int steps) {
    std::mt19937 random(unsigned(index * seeds + seed) + 1);
    std::normal_distribution<double> noise(0.0, 1.0);
    const int devices = 1 << (index % 4);

    RunRecord run;
    run.name = QStringLiteral("run %1 (%2 device%3)")
                   .arg(index + 1)
                   .arg(devices)
                   .arg(devices == 1 ? "" : "s");
    if (seeds > 1) {
        run.name += QStringLiteral(" seed %1").arg(seed + 1);
        run.group = QStringLiteral("group-%1").arg(index);
    }
    run.spec.seed = std::uint64_t(seed + 1);
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
    // Each seed learns a little faster or slower: what a group's band shows.
    const double decay = (0.25 + 0.02 * index) * (1.0 + 0.05 * noise(random));
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

// Appends step + 1 to each per-step curve of `run`, as training does. RunCollection has no
// public way to append points (its controller does, for the runs it trains), hence the benchmark
// writes into the record it holds.
void train_one_step(RunRecord& run) {
    ++run.step;
    for (const Metric metric : {Metric::TrainLoss, Metric::ImagesPerSecond, Metric::LearningRate}) {
        std::vector<MetricPoint>& curve = run.curve(metric);
        MetricPoint next = curve.back();
        next.step = run.step;
        curve.push_back(next);
    }
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
    parser.addOption({"seeds", "Runs in each group of repeats (1: no groups).", "count", "1"});
    parser.addOption({"redraws", "Full redraws timed.", "count", "20"});
    parser.addOption({"live-seconds", "How long the live phase lasts.", "seconds", "5"});
    parser.addOption(
        {"screenshot", "Save a picture of the grid to this PNG file and stop.", "file"});
    parser.addOption({"dark", "Dark theme."});
    parser.addOption({"band", "A group's band: std, minmax or off.", "band", "std"});
    parser.process(app);
    const int run_count = positive_option(parser, "runs");
    const int steps = positive_option(parser, "steps");
    const int seeds = positive_option(parser, "seeds");
    const int redraws = positive_option(parser, "redraws");
    const int live_seconds = positive_option(parser, "live-seconds");
    const QString band = parser.value("band");
    if (band != "std" && band != "minmax" && band != "off") {
        std::fprintf(stderr, "--band must be std, minmax or off, got '%s'\n", qPrintable(band));
        return 2;
    }

    RunController controller;
    RunCollection runs(controller);
    ChartGrid grid(runs);
    for (int i = 0; i < run_count; ++i)
        runs.add(synthetic_run(i / seeds, i % seeds, seeds, steps));
    grid.resize(1600, 1000);
    grid.show();
    app.processEvents();
    grid.setDarkTheme(parser.isSet("dark"));
    grid.setBand(band == "off"      ? GroupBand::Off
                 : band == "minmax" ? GroupBand::MinMax
                                    : GroupBand::StdDev);
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

    std::printf("platform=%s runs=%d steps=%d seeds=%d band=%d smoothing=%.2f\n",
                qPrintable(QGuiApplication::platformName()), run_count, steps, seeds,
                int(grid.band()), grid.smoothing());

    // (a) Full redraws. The collection's own signal marks every run dirty, as new steps would.
    // Every redraw is timed twice: once with the data as it was (what the grid computed and
    // drew last time still holds), once with every run a step further (nothing held: every
    // curve computed and painted again).
    const auto mark_all_dirty = [&] {
        for (const int id : runs.ids())
            emit runs.curvesChanged(id);
    };
    const auto timed_redraws = [&](const char* name, const auto& change) {
        std::vector<double> update_ms;
        std::vector<double> paint_ms;
        std::vector<double> total_ms;
        for (int i = 0; i < redraws; ++i) {
            change(i);
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
        std::printf("# %s\n", name);
        print("redraw_ms", total_ms);
        print("  series_update_ms", update_ms);
        print("  paint_ms", paint_ms);
    };
    timed_redraws("every run dirty, data unchanged", [&](int) { mark_all_dirty(); });
    timed_redraws("every run one step further (nothing cached)", [&](int) {
        for (const int id : runs.ids())
            train_one_step(const_cast<RunRecord&>(*runs.find(id)));
        mark_all_dirty();
    });

    // (b) Live updates through the grid's own timer, with a 5 ms timer standing in for input:
    // first every run reporting new points (the worst case), then only the first (runs train one
    // after another; the others' curves stay in the charts' cached layer).
    const auto live = [&](const char* name, const std::vector<int>& live_runs) {
        QTimer feed;
        feed.setInterval(10);
        QObject::connect(&feed, &QTimer::timeout, [&] {
            for (const int id : live_runs) {
                train_one_step(const_cast<RunRecord&>(*runs.find(id)));
                emit runs.curvesChanged(id);
            }
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
        train_one_step(const_cast<RunRecord&>(*runs.find(runs.ids().front())));
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
