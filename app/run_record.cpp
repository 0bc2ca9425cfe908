#include "run_record.h"

#include <algorithm>
#include <cmath>

namespace scalelab {

RunState run_state(RunStatus status) {
    switch (status) {
        case RunStatus::Finished:
            return RunState::Finished;
        case RunStatus::ReachedTarget:
            return RunState::ReachedTarget;
        case RunStatus::Diverged:
            return RunState::Diverged;
        case RunStatus::Cancelled:
            return RunState::Cancelled;
        case RunStatus::Failed:
            return RunState::Failed;
    }
    return RunState::Failed;
}

bool is_active(RunState state) {
    return state == RunState::Queued || state == RunState::Running;
}

std::string_view metric_name(Metric metric) {
    switch (metric) {
        case Metric::TrainLoss:
            return "train_loss";
        case Metric::TrainAccuracy:
            return "train_accuracy";
        case Metric::LearningRate:
            return "lr";
        case Metric::ImagesPerSecond:
            return "images_per_s";
        case Metric::NoiseScale:
            return "noise_scale";
        case Metric::ValLoss:
            return "val_loss";
        case Metric::ValAccuracy:
            return "val_accuracy";
    }
    return "unknown";
}

std::int64_t RunRecord::total_steps() const {
    return started ? std::int64_t{info.steps_per_epoch} * spec.epochs : 0;
}

double RunRecord::progress() const {
    if (!is_active(state) && started)
        return 1.0;
    const std::int64_t total = total_steps();
    return total > 0 ? std::clamp(double(step) / double(total), 0.0, 1.0) : 0.0;
}

std::optional<double> RunRecord::eta_seconds() const {
    if (state != RunState::Running || step == 0)
        return std::nullopt;
    const double per_step = train_seconds / double(step);
    return per_step * double(std::max<std::int64_t>(0, total_steps() - step));
}

std::optional<double> RunRecord::best_val_accuracy() const {
    if (!curves_loaded)
        return stored_best_val_accuracy;
    const auto& points = curve(Metric::ValAccuracy);
    if (points.empty())
        return std::nullopt;
    return std::max_element(points.begin(), points.end(),
                            [](const auto& a, const auto& b) { return a.value < b.value; })
        ->value;
}

std::optional<double> RunRecord::other_programs_share() const {
    if (!curves_loaded)
        return stored_other_programs_share;
    if (epochs.empty() || std::isnan(epochs.back().other_programs_share))
        return std::nullopt;
    return epochs.back().other_programs_share;
}

bool RunRecord::disturbed() const {
    const std::optional<double> share = other_programs_share();
    return share && *share >= disturbed_share;
}

std::optional<double> steady_images_per_s(const EpochMetrics& epoch) {
    if (epoch.steady_images_per_s > 0)
        return epoch.steady_images_per_s;
    return std::nullopt;
}

std::optional<double> RunRecord::mean_images_per_s() const {
    if (!curves_loaded)
        return stored_mean_images_per_s;
    if (!epochs.empty())
        return steady_images_per_s(epochs.back());
    if (step == 0 || train_seconds <= 0)
        return std::nullopt;
    return double(step) * double(info.global_batch) / train_seconds;
}

std::optional<TargetReached> RunRecord::time_to_target() const {
    if (spec.target_accuracy > 0 && !curves_loaded) {
        // The stored summary keeps the crossings of spec.targets only.
        for (const TargetReached& reached : targets)
            if (reached.target == spec.target_accuracy)
                return reached;
        return std::nullopt;
    }
    if (spec.target_accuracy > 0) {
        for (const MetricPoint& point : curve(Metric::ValAccuracy))
            if (point.value >= spec.target_accuracy)
                return TargetReached{.target = spec.target_accuracy,
                                     .seconds = point.seconds,
                                     .step = point.step,
                                     .epoch = point.epoch,
                                     .images = point.samples};
        return std::nullopt;
    }
    std::optional<TargetReached> highest;
    for (const TargetReached& reached : targets)
        if (!highest || reached.target > highest->target)
            highest = reached;
    return highest;
}

std::optional<double> RunRecord::warmup_end_step() const {
    if (!started || spec.warmup_length <= 0)
        return std::nullopt;
    if (spec.warmup_unit == WarmupUnit::Steps)
        return spec.warmup_length;
    return spec.warmup_length * info.steps_per_epoch;
}

}  // namespace scalelab
