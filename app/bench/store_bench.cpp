// scalelab-store-bench: the run store's figures against the targets of issue 7.
//   fill     a store with N runs of S steps (5 per-step curves, 2 per-epoch curves),
//   list     RunStore::open + list_runs() on it (the app's run list: within 1 s),
//   check    the integrity check recording, import and export run first,
//   load     load_record of one run (within 100 ms),
//   record   a RunRecorder's cost on the trainer's thread, and the wall time of real short
//            training runs with and without a recorder (under 2 %).

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "cli/sink_fanout.h"
#include "data/load.h"
#include "run_recorder.h"
#include "run_store.h"
#include "train/dataset_request.h"
#include "train/trainer.h"

namespace {

using scalelab::EpochMetrics;
using scalelab::Metric;
using scalelab::MetricRow;
using scalelab::RunInfo;
using scalelab::RunRecorder;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::RunStore;
using Clock = std::chrono::steady_clock;

constexpr int steps_per_epoch = 1000;
constexpr int global_batch = 256;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

double seconds_of(const std::function<void()>& work) {
    const auto start = Clock::now();
    work();
    return seconds_since(start);
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t middle = values.size() / 2;
    return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

void remove_store(const QString& path) {
    for (const char* suffix : {"", "-wal", "-shm"})
        QFile::remove(path + QLatin1String(suffix));
}

// Fills `path` with `runs` finished runs of `steps` steps, as the recorder writes them (one
// transaction per batch of rows).
void fill(const QString& path, int runs, int steps) {
    auto store = RunStore::open(path);
    RunInfo info;
    info.global_batch = global_batch;
    info.steps_per_epoch = steps_per_epoch;
    constexpr int steps_per_commit = 500;
    std::vector<MetricRow> rows;
    rows.reserve(steps_per_commit * 5 + 2);
    for (int r = 0; r < runs; ++r) {
        RunSpec spec;
        spec.devices = 1 + r % 4;
        spec.lr = 0.01 * (1 + r % 10);
        const std::int64_t id = store->create_run(spec, QStringLiteral("bench run %1").arg(r));
        store->mark_started(id, info);
        double seconds = 0;
        for (int first = 1; first <= steps; first += steps_per_commit) {
            rows.clear();
            std::vector<EpochMetrics> epochs;
            for (int step = first; step < first + steps_per_commit && step <= steps; ++step) {
                seconds += 0.05;
                const int epoch = (step - 1) / steps_per_epoch + 1;
                const auto add = [&](Metric metric, double value) {
                    rows.push_back(MetricRow{.step = step,
                                             .epoch = epoch,
                                             .wall_time = seconds,
                                             .metric = metric,
                                             .value = value});
                };
                add(Metric::TrainLoss, 2.0 / std::sqrt(double(step)));
                add(Metric::TrainAccuracy, 1.0 - 1.0 / std::sqrt(double(step)));
                add(Metric::LearningRate, spec.lr);
                add(Metric::ImagesPerSecond, global_batch / 0.05);
                add(Metric::NoiseScale, 100.0 + step * 0.01);
                if (step % steps_per_epoch == 0 || step == steps) {
                    add(Metric::ValLoss, 1.0 / epoch);
                    add(Metric::ValAccuracy, 1.0 - 0.5 / epoch);
                    EpochMetrics metrics;
                    metrics.epoch = epoch;
                    metrics.step = step;
                    metrics.val_loss = 1.0 / epoch;
                    metrics.val_accuracy = 1.0 - 0.5 / epoch;
                    metrics.steady_images_per_s = global_batch / 0.05;
                    epochs.push_back(metrics);
                }
            }
            store->append_metrics(id, rows, epochs);
        }
        store->mark_ended(id, RunState::Finished, {});
    }
}

// Takes every event and does nothing: the trainer's own cost.
class NullSink : public scalelab::MetricsSink {};

// The trainer's time spent in a sink's on_step for `steps` synthetic steps, in seconds.
double feed_steps(scalelab::MetricsSink& sink, int steps) {
    scalelab::StepMetrics metrics;
    metrics.steps_per_epoch = steps_per_epoch;
    metrics.devices.resize(1);
    const auto start = Clock::now();
    sink.on_start(RunInfo{});
    for (int step = 1; step <= steps; ++step) {
        metrics.step = step;
        metrics.epoch = (step - 1) / steps_per_epoch + 1;
        metrics.loss = 1.0 / step;
        metrics.noise_scale = double(step);
        sink.on_step(metrics);
    }
    return seconds_since(start);
}

// The CPU time of every thread of this process so far: on a machine shared with other work
// it shows what recording costs better than the wall time does.
double process_cpu_seconds() {
    timespec now{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return double(now.tv_sec) + double(now.tv_nsec) * 1e-9;
}

struct Timing {
    double wall = 0;
    double cpu = 0;
};

// One short real training run; with a recorder, its run row is created first and the time
// includes the recorder's last commit.
Timing train_once(const RunSpec& spec, const scalelab::data::TrainTest& data,
                  const QString& store_path) {
    NullSink printer;  // stands in for the CLI's progress printer
    std::unique_ptr<RunRecorder> recorder;
    std::vector<scalelab::MetricsSink*> sinks{&printer};
    const auto start = Clock::now();
    const double cpu_start = process_cpu_seconds();
    if (!store_path.isEmpty()) {
        const std::int64_t id =
            RunStore::open(store_path)->create_run(spec, QStringLiteral("bench training"));
        recorder = std::make_unique<RunRecorder>(store_path, id);
        sinks.push_back(recorder.get());
    }
    scalelab::cli::SinkFanout fanout(sinks);
    scalelab::Trainer trainer(spec, data, fanout);
    const scalelab::RunEnd end = trainer.run();
    recorder.reset();
    const Timing timing{.wall = seconds_since(start), .cpu = process_cpu_seconds() - cpu_start};
    if (end.status != scalelab::RunStatus::Finished)
        std::printf("  (training ended as %s: %s)\n", std::string(to_string(end.status)).c_str(),
                    end.message.c_str());
    return timing;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(
        QStringLiteral("Measures the run store: fill, list, load, recording overhead."));
    parser.addHelpOption();
    const QCommandLineOption runs_option(QStringLiteral("runs"), QStringLiteral("Runs to store."),
                                         QStringLiteral("N"), QStringLiteral("200"));
    const QCommandLineOption steps_option(QStringLiteral("steps"),
                                          QStringLiteral("Steps per stored run."),
                                          QStringLiteral("S"), QStringLiteral("10000"));
    const QCommandLineOption store_option(
        QStringLiteral("store"), QStringLiteral("The store file (replaced)."),
        QStringLiteral("FILE"), QStringLiteral("/tmp/scalelab-store-bench.sqlite"));
    const QCommandLineOption repeats_option(QStringLiteral("repeats"),
                                            QStringLiteral("Training runs with and without "
                                                           "recording."),
                                            QStringLiteral("R"), QStringLiteral("3"));
    const QCommandLineOption reuse_option(QStringLiteral("reuse"),
                                          QStringLiteral("Measure the store FILE as it is, "
                                                         "without filling it."));
    const QCommandLineOption no_training_option(QStringLiteral("no-training"),
                                                QStringLiteral("Skip the training runs."));
    parser.addOptions({runs_option, steps_option, store_option, repeats_option, reuse_option,
                       no_training_option});
    parser.process(app);
    bool runs_ok = false;
    bool steps_ok = false;
    bool repeats_ok = false;
    const int runs = parser.value(runs_option).toInt(&runs_ok);
    const int steps = parser.value(steps_option).toInt(&steps_ok);
    const int repeats = parser.value(repeats_option).toInt(&repeats_ok);
    if (!runs_ok || !steps_ok || !repeats_ok || runs < 1 || steps < 1 || repeats < 1) {
        std::fprintf(stderr, "--runs, --steps and --repeats take whole numbers of at least 1\n");
        return 2;
    }
    const QString path = parser.value(store_option);

    try {
        if (!parser.isSet(reuse_option)) {
            remove_store(path);
            const double filling = seconds_of([&] { fill(path, runs, steps); });
            const double rows =
                double(runs) * steps * 5 + 2.0 * runs * std::ceil(double(steps) / steps_per_epoch);
            std::printf("fill: %d runs x %d steps (%.0f metric rows) in %.1f s, %.0f rows/s\n",
                        runs, steps, rows, filling, rows / filling);
        }
        std::printf("store: %s, %.1f MB\n", qPrintable(path), double(QFileInfo(path).size()) / 1e6);

        std::vector<double> open_list;
        std::size_t listed = 0;
        for (int i = 0; i < 3; ++i)
            open_list.push_back(
                seconds_of([&] { listed = RunStore::open(path)->list_runs().size(); }));
        std::printf(
            "open + list_runs (%zu runs): min %.1f / median %.1f / max %.1f ms "
            "(target: the run list within 1000 ms)\n",
            listed, *std::min_element(open_list.begin(), open_list.end()) * 1e3,
            median(open_list) * 1e3, *std::max_element(open_list.begin(), open_list.end()) * 1e3);

        auto store = RunStore::open(path);
        // What every recording, import and export runs first (RunStore::check_integrity).
        const double checking = seconds_of([&] { store->check_integrity(); });
        std::printf("integrity check (PRAGMA quick_check): %.2f s, %.2f s per GB\n", checking,
                    checking / (double(QFileInfo(path).size()) / 1e9));
        const std::vector<scalelab::StoredRun> stored = store->list_runs();
        std::vector<double> loads;
        std::size_t points = 0;
        for (int i = 0; i < 9; ++i) {
            const std::int64_t id = stored[std::size_t(i) * stored.size() / 9].id;
            loads.push_back(seconds_of([&] {
                const scalelab::RunRecord record = store->load_record(id);
                points = 0;
                for (const Metric metric : scalelab::all_metrics)
                    points += record.curve(metric).size();
            }));
        }
        std::printf(
            "load_record (%zu points): min %.1f / median %.1f / max %.1f ms over %zu "
            "runs (target: < 100 ms)\n",
            points, *std::min_element(loads.begin(), loads.end()) * 1e3, median(loads) * 1e3,
            *std::max_element(loads.begin(), loads.end()) * 1e3, loads.size());
        store.reset();

        const QString record_path = path + QStringLiteral(".recorder");
        remove_store(record_path);
        NullSink null_sink;
        const double null_feed = feed_steps(null_sink, steps);
        const std::int64_t id =
            RunStore::open(record_path)->create_run(RunSpec{}, QStringLiteral("fed"));
        double recorder_feed = 0;
        const double recorder_total = seconds_of([&] {
            RunRecorder recorder(record_path, id);
            recorder_feed = feed_steps(recorder, steps);
        });
        std::printf(
            "recorder fed %d steps: %.0f ns/step on the trainer's thread (no-op sink "
            "%.0f ns/step); %.2f s until all were committed\n",
            steps, recorder_feed / steps * 1e9, null_feed / steps * 1e9, recorder_total);

        if (parser.isSet(no_training_option)) {
            remove_store(record_path);
            return 0;
        }
        RunSpec spec;
        spec.model = "mlp";
        spec.dataset = "synthetic";
        spec.synthetic_train = 65536;
        spec.synthetic_test = 2048;
        spec.batch = 64;
        spec.epochs = 2;
        spec.targets = {};
        // One thread: on a machine shared with other work, OpenMP's spin-waiting makes the wall
        // time of a multi-threaded run swing by several times, hiding an effect of a few percent.
        spec.threads = 1;
        const scalelab::data::TrainTest data =
            scalelab::data::load_dataset(scalelab::dataset_request(spec));
        std::vector<Timing> plain;
        std::vector<Timing> recorded;
        train_once(spec, data, {});  // warms the caches and the allocator
        // Alternating which goes first cancels what running second does to a run.
        for (int i = 0; i < repeats; ++i) {
            if (i % 2 == 0)
                plain.push_back(train_once(spec, data, {}));
            recorded.push_back(train_once(spec, data, record_path));
            if (i % 2 == 1)
                plain.push_back(train_once(spec, data, {}));
        }
        std::printf("training (mlp, synthetic, 2 epochs x %d steps), median of %d runs each:\n",
                    spec.synthetic_train / spec.batch, repeats);
        const auto report = [&](const char* what, double Timing::*field) {
            std::vector<double> without;
            std::vector<double> with;
            for (const Timing& timing : plain)
                without.push_back(timing.*field);
            for (const Timing& timing : recorded)
                with.push_back(timing.*field);
            std::printf(
                "  %s: %.3f s without recording, %.3f s with a RunRecorder: %+.2f %% "
                "(target: < 2 %%)\n    without:",
                what, median(without), median(with), (median(with) / median(without) - 1) * 100);
            for (double seconds : without)
                std::printf(" %.3f", seconds);
            std::printf("\n    with:   ");
            for (double seconds : with)
                std::printf(" %.3f", seconds);
            std::printf("\n");
        };
        report("wall time", &Timing::wall);
        report("CPU time (all threads)", &Timing::cpu);
        remove_store(record_path);
    } catch (const std::exception& error) {  // a StoreError, or the data's scalelab::Error
        std::fprintf(stderr, "%s\n", error.what());
        return 1;
    }
    return 0;
}
