#include "train/run_spec.h"

#include <algorithm>
#include <cmath>

namespace scalelab {

namespace {

bool contains(const std::vector<std::string>& names, const std::string& name) {
    return std::find(names.begin(), names.end(), name) != names.end();
}

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (const auto& n : names)
        out += (out.empty() ? "" : ", ") + n;
    return out;
}

}  // namespace

const std::vector<std::string>& model_names() {
    static const std::vector<std::string> names{"mlp", "cnn", "resnet8", "resnet20", "wrn"};
    return names;
}

const std::vector<std::string>& dataset_names() {
    static const std::vector<std::string> names{"fashion-mnist", "mnist", "cifar10", "synthetic"};
    return names;
}

std::string_view to_string(ScheduleKind kind) {
    switch (kind) {
        case ScheduleKind::Constant:
            return "constant";
        case ScheduleKind::Step:
            return "step";
        case ScheduleKind::MultiStep:
            return "multistep";
        case ScheduleKind::Cosine:
            return "cosine";
    }
    return "constant";
}

std::optional<ScheduleKind> parse_schedule(std::string_view s) {
    for (auto k : {ScheduleKind::Constant, ScheduleKind::Step, ScheduleKind::MultiStep,
                   ScheduleKind::Cosine})
        if (to_string(k) == s)
            return k;
    return std::nullopt;
}

std::string_view to_string(WarmupUnit unit) {
    return unit == WarmupUnit::Epochs ? "epochs" : "steps";
}

std::optional<WarmupUnit> parse_warmup_unit(std::string_view s) {
    if (s == "epochs")
        return WarmupUnit::Epochs;
    if (s == "steps")
        return WarmupUnit::Steps;
    return std::nullopt;
}

std::vector<std::string> RunSpec::validate() const {
    std::vector<std::string> errors;
    auto require = [&](bool ok, std::string message) {
        if (!ok)
            errors.push_back(std::move(message));
    };
    auto finite = [](double v) { return std::isfinite(v); };

    require(contains(model_names(), model),
            "model '" + model + "' is unknown: choose one of " + join(model_names()));
    require(width >= 1 && width <= 64,
            "width must be between 1 and 64 (got " + std::to_string(width) + ")");
    require(contains(dataset_names(), dataset),
            "dataset '" + dataset + "' is unknown: choose one of " + join(dataset_names()));
    if (dataset == "synthetic") {
        require(synthetic_train >= 1, "synthetic_train must be at least 1");
        require(synthetic_test >= 1, "synthetic_test must be at least 1");
        require(synthetic_channels == 1 || synthetic_channels == 3,
                "synthetic_channels must be 1 or 3");
        require(synthetic_size >= 4 && synthetic_size <= 256 && synthetic_size % 4 == 0,
                "synthetic_size must be a multiple of 4 between 4 and 256 (got " +
                    std::to_string(synthetic_size) + ")");
    }
    require(epochs >= 1, "epochs must be at least 1 (got " + std::to_string(epochs) + ")");
    require(
        batch >= 1 && batch <= 65536,
        "batch must be between 1 and 65536 images per device (got " + std::to_string(batch) + ")");
    require(devices >= 1 && devices <= max_cpu_devices,
            "devices must be between 1 and " + std::to_string(max_cpu_devices) +
                " CPU devices (got " + std::to_string(devices) + ")");
    require(accumulation >= 1 && accumulation <= 1024,
            "accumulation must be between 1 and 1024 micro-batches (got " +
                std::to_string(accumulation) + ")");
    require(finite(bucket_mb) && bucket_mb > 0 && bucket_mb <= 1024,
            "bucket_mb must be in (0, 1024] MB");
    require(finite(first_bucket_mb) && first_bucket_mb > 0 && first_bucket_mb <= 1024,
            "first_bucket_mb must be in (0, 1024] MB");
    require(finite(lr) && lr > 0, "lr must be a positive number (got " + std::to_string(lr) + ")");
    require(finite(momentum) && momentum >= 0 && momentum < 1,
            "momentum must be in [0, 1) (got " + std::to_string(momentum) + ")");
    require(!nesterov || momentum > 0, "nesterov needs a momentum above 0");
    require(finite(weight_decay) && weight_decay >= 0, "weight_decay must be 0 or positive");
    require(finite(label_smoothing) && label_smoothing >= 0 && label_smoothing < 1,
            "label_smoothing must be in [0, 1)");
    require(finite(gamma) && gamma > 0 && gamma <= 1, "gamma must be in (0, 1]");
    require(step_epochs >= 1, "step_epochs must be at least 1");
    if (schedule == ScheduleKind::MultiStep) {
        require(!milestones.empty(),
                "the multistep schedule needs milestones (epochs, e.g. 30,60)");
        require(std::is_sorted(milestones.begin(), milestones.end()) &&
                    std::adjacent_find(milestones.begin(), milestones.end()) == milestones.end(),
                "milestones must be strictly increasing");
        require(milestones.empty() || milestones.front() >= 1, "milestones must be at least 1");
    }
    require(finite(min_lr) && min_lr >= 0 && min_lr <= lr, "min_lr must be in [0, lr]");
    require(finite(warmup) && warmup >= 0, "warmup must be 0 or positive");
    require(warmup_unit == WarmupUnit::Epochs || warmup == std::floor(warmup),
            "warmup in steps must be a whole number");
    require(finite(warmup_start_factor) && warmup_start_factor >= 0 && warmup_start_factor <= 1,
            "warmup_start_factor must be in [0, 1]");
    require(threads >= 0 && threads <= 1024, "threads must be 0 (all cores) or a positive count");
    require(finite(target_accuracy) && target_accuracy >= 0 && target_accuracy <= 1,
            "target_accuracy must be in [0, 1] (0: no target)");
    require(patience >= 1, "patience must be at least 1 epoch");
    return errors;
}

}  // namespace scalelab
