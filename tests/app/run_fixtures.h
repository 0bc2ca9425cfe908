#pragma once

// Prepared runs for the tests of the run table, the comparisons, the exports and the scaling
// view: finished (or running) RunRecords with whole curves, built without training anything.

#include <QString>

#include <algorithm>
#include <utility>
#include <vector>

#include "run_record.h"

namespace scalelab::testing {

// A small CNN run on `devices` devices, 128 images per device.
inline RunSpec fixture_spec(int devices, double lr = 0.1) {
    RunSpec spec;
    spec.model = "cnn";
    spec.dataset = "fashion-mnist";
    spec.devices = devices;
    spec.batch = 128;
    spec.lr = lr;
    spec.targets = {0.85, 0.90};
    return spec;
}

// A run that trained one epoch per entry of `val_accuracy` at a constant `images_per_s`, with
// `steps_per_epoch` steps each: every step has its training points, every epoch its validation
// points, and each target of spec.targets is reached at the first epoch whose accuracy is at
// least the target. Ends as `state`.
inline RunRecord fixture_run(const RunSpec& spec, const QString& name, double images_per_s,
                             const std::vector<double>& val_accuracy,
                             RunState state = RunState::Finished, int steps_per_epoch = 10) {
    RunRecord run;
    run.name = name;
    run.spec = spec;
    run.spec.epochs = int(val_accuracy.size());
    run.state = state;
    run.started = true;
    run.info.devices = spec.devices;
    run.info.cores = 2;
    run.info.global_batch = spec.devices * spec.batch * spec.accumulation;
    run.info.steps_per_epoch = steps_per_epoch;
    run.info.parameters = 12345;

    const double step_seconds = double(run.info.global_batch) / images_per_s;
    for (int epoch = 1; epoch <= int(val_accuracy.size()); ++epoch) {
        for (int in_epoch = 1; in_epoch <= steps_per_epoch; ++in_epoch) {
            ++run.step;
            run.train_seconds += step_seconds;
            const double samples = double(run.step) * run.info.global_batch;
            const auto add = [&](Metric metric, double value) {
                run.curve(metric).push_back(
                    MetricPoint{run.step, epoch, samples, run.train_seconds, value});
            };
            add(Metric::TrainLoss, 2.0 / double(run.step));
            add(Metric::TrainAccuracy, 1.0 - 1.0 / double(run.step + 1));
            add(Metric::LearningRate, spec.lr);
            add(Metric::ImagesPerSecond, images_per_s);
        }
        run.epoch = epoch;
        const double accuracy = val_accuracy[std::size_t(epoch - 1)];
        const double samples = double(run.step) * run.info.global_batch;
        run.curve(Metric::ValLoss)
            .push_back(MetricPoint{run.step, epoch, samples, run.train_seconds, 1.0 - accuracy});
        run.curve(Metric::ValAccuracy)
            .push_back(MetricPoint{run.step, epoch, samples, run.train_seconds, accuracy});

        EpochMetrics metrics;
        metrics.epoch = epoch;
        metrics.step = run.step;
        metrics.val_accuracy = accuracy;
        metrics.images_per_s = images_per_s;
        metrics.steady_images_per_s = images_per_s;
        for (double target : spec.targets) {
            const bool before = std::any_of(run.targets.begin(), run.targets.end(),
                                            [&](const auto& t) { return t.target == target; });
            if (!before && accuracy >= target)
                metrics.reached.push_back(
                    TargetReached{target, run.train_seconds, run.step, epoch, samples});
        }
        run.targets.insert(run.targets.end(), metrics.reached.begin(), metrics.reached.end());
        run.epochs.push_back(std::move(metrics));
    }
    return run;
}

// `run` as if it had trained with `threads` threads per device (RunSpec::threads, and what its
// RunInfo reports).
inline RunRecord with_threads(RunRecord run, int threads) {
    run.spec.threads = threads;
    run.info.threads_per_device = threads;
    return run;
}

}  // namespace scalelab::testing
