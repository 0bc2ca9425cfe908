#include "train/run_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "optim/format_number.h"
#include "quoted_text.h"

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

double effective_lr(const RunSpec& spec) {
    const double k = double(spec.devices) * spec.batch * spec.accumulation / spec.reference_batch;
    switch (spec.lr_scaling) {
        case LrScaling::None:
            return spec.lr;
        case LrScaling::Linear:
            return spec.lr * k;
        case LrScaling::Sqrt:
            return spec.lr * std::sqrt(k);
    }
    return spec.lr;
}

WholeRange whole_range(int RunSpec::*field) {
    constexpr int any = std::numeric_limits<int>::max();
    static const std::pair<int RunSpec::*, WholeRange> ranges[] = {
        {&RunSpec::width, {1, 64}},
        {&RunSpec::synthetic_train, {1, any}},
        {&RunSpec::synthetic_test, {1, any}},
        {&RunSpec::synthetic_channels, {1, 3}},
        {&RunSpec::synthetic_size, {8, 256}},
        {&RunSpec::train_subset, {0, any}},
        {&RunSpec::test_subset, {0, any}},
        {&RunSpec::epochs, {1, any}},
        {&RunSpec::batch, {1, 65536}},
        {&RunSpec::devices, {1, max_cpu_devices}},
        {&RunSpec::accumulation, {1, 1024}},
        {&RunSpec::ghost_batch, {0, any}},
        {&RunSpec::reference_batch, {1, any}},
        {&RunSpec::step_epochs, {1, any}},
        {&RunSpec::threads, {0, 1024}},
        {&RunSpec::patience, {1, any}},
    };
    for (const auto& [member, range] : ranges)
        if (member == field)
            return range;
    return {std::numeric_limits<int>::min(), any};
}

std::vector<std::string> RunSpec::validate() const {
    std::vector<std::string> errors;
    auto in_range = [this](int RunSpec::*field) {
        const WholeRange range = whole_range(field);
        return this->*field >= range.min && this->*field <= range.max;
    };
    auto require = [&](bool ok, std::string message) {
        if (!ok)
            errors.push_back(std::move(message));
    };
    auto finite = [](double v) { return std::isfinite(v); };

    require(contains(model_names(), model),
            "model " + quoted_text(model) + " is unknown: choose one of " + join(model_names()));
    require(in_range(&RunSpec::width),
            "width must be between 1 and 64 (got " + std::to_string(width) + ")");
    require(
        contains(dataset_names(), dataset),
        "dataset " + quoted_text(dataset) + " is unknown: choose one of " + join(dataset_names()));
    if (dataset == "synthetic") {
        require(in_range(&RunSpec::synthetic_train), "synthetic_train must be at least 1");
        require(in_range(&RunSpec::synthetic_test), "synthetic_test must be at least 1");
        require(synthetic_channels == 1 || synthetic_channels == 3,
                "synthetic_channels must be 1 or 3");
        // The generator draws its class prototypes on at least 8x8 pixels.
        require(in_range(&RunSpec::synthetic_size) && synthetic_size % 4 == 0,
                "synthetic_size must be a multiple of 4 between 8 and 256 (got " +
                    std::to_string(synthetic_size) + ")");
    }
    require(in_range(&RunSpec::train_subset),
            "train_subset must be 0 (the whole set) or a count of images");
    require(in_range(&RunSpec::test_subset),
            "test_subset must be 0 (the whole set) or a count of images");
    require(in_range(&RunSpec::epochs),
            "epochs must be at least 1 (got " + std::to_string(epochs) + ")");
    require(in_range(&RunSpec::batch), "batch must be between 1 and 65536 images per device (got " +
                                           std::to_string(batch) + ")");
    require(in_range(&RunSpec::devices), "devices must be between 1 and " +
                                             std::to_string(max_cpu_devices) +
                                             " CPU devices (got " + std::to_string(devices) + ")");
    // Whether the GPUs exist is the machine's question: the trainer asks it.
    require(gpus.empty() || device == DeviceKind::Gpu,
            "gpus lists GPUs for a run on CPU devices: set device to gpu, or leave gpus empty");
    require(gpus.empty() || device != DeviceKind::Gpu || std::size_t(devices) == gpus.size(),
            "gpus lists " + std::to_string(gpus.size()) + " GPU(s) for " + std::to_string(devices) +
                " device(s): list one GPU per device, or leave gpus empty for the first ones");
    // At least a second: shorter, an ordinary pause of one device's thread (a slow batch, the
    // operating system) would end a healthy run.
    require(
        finite(collective_timeout_s) && collective_timeout_s >= 1 && collective_timeout_s <= 86400,
        "collective_timeout_s must be between 1 and 86400 seconds (got " +
            optim::format_number(collective_timeout_s) + ")");
    require(in_range(&RunSpec::accumulation),
            "accumulation must be between 1 and 1024 micro-batches (got " +
                std::to_string(accumulation) + ")");
    require(finite(bucket_mb) && bucket_mb > 0 && bucket_mb <= 1024,
            "bucket_mb must be in (0, 1024] MB");
    require(finite(first_bucket_mb) && first_bucket_mb > 0 && first_bucket_mb <= 1024,
            "first_bucket_mb must be in (0, 1024] MB");
    require(finite(lr) && lr > 0,
            "lr must be a positive number (got " + optim::format_number(lr) + ")");
    require(finite(momentum) && momentum >= 0 && momentum < 1,
            "momentum must be in [0, 1) (got " + optim::format_number(momentum) + ")");
    require(!nesterov || momentum > 0, "nesterov needs a momentum above 0");
    require(finite(weight_decay) && weight_decay >= 0, "weight_decay must be 0 or positive");
    require(finite(label_smoothing) && label_smoothing >= 0 && label_smoothing < 1,
            "label_smoothing must be in [0, 1)");
    require(finite(gamma) && gamma > 0 && gamma <= 1, "gamma must be in (0, 1]");
    require(in_range(&RunSpec::step_epochs), "step_epochs must be at least 1");
    if (schedule == ScheduleKind::MultiStep) {
        require(!milestones.empty(),
                "the multistep schedule needs milestones (epochs, e.g. 30,60)");
        require(std::is_sorted(milestones.begin(), milestones.end()) &&
                    std::adjacent_find(milestones.begin(), milestones.end()) == milestones.end(),
                "milestones must be strictly increasing");
        require(milestones.empty() || milestones.front() >= 1, "milestones must be at least 1");
    }
    // Against an lr that is itself wrong there is no upper bound to check: its message says it.
    require(finite(min_lr) && min_lr >= 0 && (min_lr <= lr || !(lr > 0)),
            "min_lr must be in [0, lr]");
    require(finite(warmup_length) && warmup_length >= 0, "warmup_length must be 0 or positive");
    require(warmup_unit == WarmupUnit::Epochs || warmup_length == std::floor(warmup_length),
            "a warm-up in steps must be a whole number");
    require(warmup_unit != WarmupUnit::Epochs || warmup_length <= epochs,
            "the warm-up (" + optim::format_number(warmup_length) +
                " epochs) is longer than the run (" + std::to_string(epochs) +
                " epochs): shorten it or train longer");
    require(warmup != WarmupKind::PerEpoch || warmup_unit == WarmupUnit::Epochs,
            "the per-epoch warm-up is measured in epochs: set warmup_unit to epochs "
            "(--warmup-epochs)");
    require(in_range(&RunSpec::reference_batch), "reference_batch must be at least 1");
    require(finite(beta1) && beta1 >= 0 && beta1 < 1, "beta1 must be in [0, 1)");
    require(finite(beta2) && beta2 >= 0 && beta2 < 1, "beta2 must be in [0, 1)");
    require(finite(eps) && eps > 0 && eps < 1, "eps must be in (0, 1)");
    require(finite(trust_coefficient) && trust_coefficient > 0 && trust_coefficient <= 1,
            "trust_coefficient (LARS eta) must be in (0, 1]");
    require(finite(trust_clamp) && trust_clamp >= 0, "trust_clamp must be 0 (none) or positive");
    require(finite(poly_power) && poly_power > 0 && poly_power <= 10,
            "poly_power must be in (0, 10]");
    require(in_range(&RunSpec::ghost_batch) && (ghost_batch == 0 || batch % ghost_batch == 0),
            "ghost_batch must be 0 (off) or divide the batch per device (" + std::to_string(batch) +
                ")");
    require(ghost_batch == 0 || !sync_bn, "ghost_batch and sync_bn cannot be combined: choose one");
    require(!zero_init_residual || model == "resnet8" || model == "resnet20",
            "zero_init_residual needs resnet8 or resnet20 (wrn's last batch norm feeds a ReLU, "
            "whose gradient at 0 would stop its blocks from learning; mlp and cnn have no "
            "residual blocks)");
    require(finite(noise_scale_beta) && noise_scale_beta >= 0 && noise_scale_beta < 1,
            "noise_scale_beta must be in [0, 1)");
    require(targets.size() <= 16 &&
                std::all_of(targets.begin(), targets.end(),
                            [](double t) { return std::isfinite(t) && t > 0 && t <= 1; }),
            "targets must be at most 16 accuracies in (0, 1]");
    require(finite(warmup_start_factor) && warmup_start_factor >= 0 && warmup_start_factor <= 1,
            "warmup_start_factor must be in [0, 1]");
    require(in_range(&RunSpec::threads),
            "threads must be a count from 1 to 1024 per device, or 0 to share all cores");
    require(finite(target_accuracy) && target_accuracy >= 0 && target_accuracy <= 1,
            "target_accuracy must be in [0, 1] (0: no target)");
    require(in_range(&RunSpec::patience), "patience must be at least 1 epoch");
    return errors;
}

}  // namespace scalelab
