#include "train/run_spec.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "optim/format_number.h"

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

namespace {

// Each enum's names, in declaration order: the one table to_string and parse read.
template <typename Enum, std::size_t N>
using Names = std::array<std::pair<Enum, std::string_view>, N>;

template <typename Enum, std::size_t N>
std::string_view name_of(const Names<Enum, N>& names, Enum value) {
    for (const auto& [e, name] : names)
        if (e == value)
            return name;
    return names[0].second;
}

template <typename Enum, std::size_t N>
std::optional<Enum> parse_name(const Names<Enum, N>& names, std::string_view s) {
    for (const auto& [e, name] : names)
        if (name == s)
            return e;
    return std::nullopt;
}

constexpr Names<ScheduleKind, 6> schedule_names{{{ScheduleKind::Constant, "constant"},
                                                 {ScheduleKind::Step, "step"},
                                                 {ScheduleKind::MultiStep, "multistep"},
                                                 {ScheduleKind::Cosine, "cosine"},
                                                 {ScheduleKind::Poly, "poly"},
                                                 {ScheduleKind::Exp, "exp"}}};
constexpr Names<WarmupUnit, 2> warmup_unit_names{
    {{WarmupUnit::Epochs, "epochs"}, {WarmupUnit::Steps, "steps"}}};
constexpr Names<WarmupKind, 3> warmup_kind_names{{{WarmupKind::Gradual, "gradual"},
                                                  {WarmupKind::PerEpoch, "per-epoch"},
                                                  {WarmupKind::Constant, "constant"}}};
constexpr Names<OptimizerKind, 5> optimizer_names{{{OptimizerKind::Sgd, "sgd"},
                                                   {OptimizerKind::Lars, "lars"},
                                                   {OptimizerKind::Lamb, "lamb"},
                                                   {OptimizerKind::NovoGrad, "novograd"},
                                                   {OptimizerKind::AdamW, "adamw"}}};
constexpr Names<LrScaling, 3> lr_scaling_names{
    {{LrScaling::None, "none"}, {LrScaling::Linear, "linear"}, {LrScaling::Sqrt, "sqrt"}}};
constexpr Names<Augmentation, 4> augmentation_names{{{Augmentation::None, "none"},
                                                     {Augmentation::Flip, "flip"},
                                                     {Augmentation::CropFlip, "crop-flip"},
                                                     {Augmentation::Assessment, "assessment"}}};
constexpr Names<DeviceKind, 2> device_kind_names{
    {{DeviceKind::Cpu, "cpu"}, {DeviceKind::Gpu, "gpu"}}};

}  // namespace

std::string_view to_string(ScheduleKind v) {
    return name_of(schedule_names, v);
}
std::optional<ScheduleKind> parse_schedule(std::string_view s) {
    return parse_name(schedule_names, s);
}
std::string_view to_string(WarmupUnit v) {
    return name_of(warmup_unit_names, v);
}
std::optional<WarmupUnit> parse_warmup_unit(std::string_view s) {
    return parse_name(warmup_unit_names, s);
}
std::string_view to_string(WarmupKind v) {
    return name_of(warmup_kind_names, v);
}
std::optional<WarmupKind> parse_warmup_kind(std::string_view s) {
    return parse_name(warmup_kind_names, s);
}
std::string_view to_string(OptimizerKind v) {
    return name_of(optimizer_names, v);
}
std::optional<OptimizerKind> parse_optimizer(std::string_view s) {
    return parse_name(optimizer_names, s);
}
std::string_view to_string(LrScaling v) {
    return name_of(lr_scaling_names, v);
}
std::optional<LrScaling> parse_lr_scaling(std::string_view s) {
    return parse_name(lr_scaling_names, s);
}
std::string_view to_string(Augmentation v) {
    return name_of(augmentation_names, v);
}
std::optional<Augmentation> parse_augmentation(std::string_view s) {
    return parse_name(augmentation_names, s);
}
std::string_view to_string(DeviceKind v) {
    return name_of(device_kind_names, v);
}
std::optional<DeviceKind> parse_device_kind(std::string_view s) {
    return parse_name(device_kind_names, s);
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
        // The generator draws its class prototypes on at least 8x8 pixels.
        require(synthetic_size >= 8 && synthetic_size <= 256 && synthetic_size % 4 == 0,
                "synthetic_size must be a multiple of 4 between 8 and 256 (got " +
                    std::to_string(synthetic_size) + ")");
    }
    require(train_subset >= 0, "train_subset must be 0 (the whole set) or a count of images");
    require(test_subset >= 0, "test_subset must be 0 (the whole set) or a count of images");
    require(epochs >= 1, "epochs must be at least 1 (got " + std::to_string(epochs) + ")");
    require(
        batch >= 1 && batch <= 65536,
        "batch must be between 1 and 65536 images per device (got " + std::to_string(batch) + ")");
    require(devices >= 1 && devices <= max_cpu_devices,
            "devices must be between 1 and " + std::to_string(max_cpu_devices) +
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
    require(accumulation >= 1 && accumulation <= 1024,
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
    require(reference_batch >= 1, "reference_batch must be at least 1");
    require(finite(beta1) && beta1 >= 0 && beta1 < 1, "beta1 must be in [0, 1)");
    require(finite(beta2) && beta2 >= 0 && beta2 < 1, "beta2 must be in [0, 1)");
    require(finite(eps) && eps > 0 && eps < 1, "eps must be in (0, 1)");
    require(finite(trust_coefficient) && trust_coefficient > 0 && trust_coefficient <= 1,
            "trust_coefficient (LARS eta) must be in (0, 1]");
    require(finite(trust_clamp) && trust_clamp >= 0, "trust_clamp must be 0 (none) or positive");
    require(finite(poly_power) && poly_power > 0 && poly_power <= 10,
            "poly_power must be in (0, 10]");
    require(ghost_batch >= 0 && (ghost_batch == 0 || batch % ghost_batch == 0),
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
    require(threads >= 0 && threads <= 1024,
            "threads must be 0 (all cores) or a count from 1 to 1024");
    require(finite(target_accuracy) && target_accuracy >= 0 && target_accuracy <= 1,
            "target_accuracy must be in [0, 1] (0: no target)");
    require(patience >= 1, "patience must be at least 1 epoch");
    return errors;
}

}  // namespace scalelab
