#include "train/run_spec.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <variant>

#include "optim/format_number.h"
#include "quoted_text.h"
#include "train/spec_fields.h"

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

// Each number field's range (spec_fields.h), the rule every field has on its own.
static void check_ranges(const RunSpec& spec, std::vector<std::string>& errors) {
    for (const SpecField& field : spec_fields()) {
        if (!field.range)
            continue;
        const std::string expected = std::string(field.whole() ? "a whole number " : "a number ") +
                                     field.range->text(field.whole());
        std::visit(
            [&](auto member) {
                using T = std::remove_cvref_t<decltype(spec.*member)>;
                if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>) {
                    const double value = double(spec.*member);
                    if (!std::isfinite(value) || !field.range->contains(value))
                        errors.push_back(std::string(field.key) + " must be " + expected +
                                         " (got " + optim::format_number(value) + ")");
                } else if constexpr (std::is_same_v<T, std::vector<int>> ||
                                     std::is_same_v<T, std::vector<double>>) {
                    for (const auto item : spec.*member)
                        if (!std::isfinite(double(item)) || !field.range->contains(double(item))) {
                            errors.push_back(std::string(field.key) + " must each be " + expected +
                                             " (got " + optim::format_number(double(item)) + ")");
                            break;
                        }
                }
            },
            field.member);
    }
}

std::vector<std::string> RunSpec::validate() const {
    std::vector<std::string> errors;
    check_ranges(*this, errors);
    // The rules that are more than a field's range, each written once.
    auto require = [&](bool ok, std::string message) {
        if (!ok)
            errors.push_back(std::move(message));
    };
    require(contains(model_names(), model),
            "model " + quoted_text(model) + " is unknown: choose one of " + join(model_names()));
    require(
        contains(dataset_names(), dataset),
        "dataset " + quoted_text(dataset) + " is unknown: choose one of " + join(dataset_names()));
    require(synthetic_channels == 1 || synthetic_channels == 3,
            "synthetic_channels must be 1 or 3 (got " + std::to_string(synthetic_channels) + ")");
    // The generator draws its class prototypes on whole 4x4 cells.
    require(synthetic_size % 4 == 0,
            "synthetic_size must be a multiple of 4 (got " + std::to_string(synthetic_size) + ")");
    // Whether the GPUs exist is the machine's question: the trainer asks it.
    require(gpus.empty() || device == DeviceKind::Gpu,
            "gpus lists GPUs for a run on CPU devices: set device to gpu, or leave gpus empty");
    require(gpus.empty() || device != DeviceKind::Gpu || std::size_t(devices) == gpus.size(),
            "gpus lists " + std::to_string(gpus.size()) + " GPU(s) for " + std::to_string(devices) +
                " device(s): list one GPU per device, or leave gpus empty for the first ones");
    require(!nesterov || momentum > 0, "nesterov needs a momentum above 0");
    if (schedule == ScheduleKind::MultiStep) {
        require(!milestones.empty(),
                "the multistep schedule needs milestones (epochs, e.g. 30,60)");
        require(std::is_sorted(milestones.begin(), milestones.end()) &&
                    std::adjacent_find(milestones.begin(), milestones.end()) == milestones.end(),
                "milestones must be strictly increasing");
    }
    // Against an lr that is itself wrong there is no upper bound to check: its message says it.
    require(!(min_lr > lr) || !(lr > 0), "min_lr must be at most lr (" + optim::format_number(lr) +
                                             ", got " + optim::format_number(min_lr) + ")");
    require(warmup_unit == WarmupUnit::Epochs || warmup_length == std::floor(warmup_length),
            "a warm-up in steps must be a whole number");
    require(warmup_unit != WarmupUnit::Epochs || warmup_length <= epochs,
            "the warm-up (" + optim::format_number(warmup_length) +
                " epochs) is longer than the run (" + std::to_string(epochs) +
                " epochs): shorten it or train longer");
    require(warmup != WarmupKind::PerEpoch || warmup_unit == WarmupUnit::Epochs,
            "the per-epoch warm-up is measured in epochs: set warmup_unit to epochs "
            "(--warmup-epochs)");
    require(ghost_batch <= 0 || batch % ghost_batch == 0,
            "ghost_batch must be 0 (off) or divide the batch per device (" + std::to_string(batch) +
                ")");
    require(ghost_batch == 0 || !sync_bn, "ghost_batch and sync_bn cannot be combined: choose one");
    require(!zero_init_residual || model == "resnet8" || model == "resnet20",
            "zero_init_residual needs resnet8 or resnet20 (wrn's last batch norm feeds a ReLU, "
            "whose gradient at 0 would stop its blocks from learning; mlp and cnn have no "
            "residual blocks)");
    require(targets.size() <= 16,
            "targets must be at most 16 accuracies (got " + std::to_string(targets.size()) + ")");
    return errors;
}

}  // namespace scalelab
