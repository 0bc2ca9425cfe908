#include "optim/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <numbers>
#include <string>

#include "error.h"
#include "optim/format_number.h"

namespace scalelab::optim {

namespace {

[[noreturn]] void reject(const std::string& message) {
    throw Error(ErrorKind::InvalidSpec, message);
}

// A count of steps in full, "1234567" rather than format_number's "1.23457e+06", unless it is
// fractional (a fraction of an epoch) or beyond any run.
std::string steps_text(double steps) {
    if (steps == std::floor(steps) && std::abs(steps) < 0x1p62) {
        return std::to_string(static_cast<std::int64_t>(steps));
    }
    return format_number(steps);
}

}  // namespace

LrScheduleConfig schedule_config(const RunSpec& spec) {
    LrScheduleConfig config;
    config.base_lr = effective_lr(spec);
    config.kind = spec.schedule;
    config.gamma = spec.gamma;
    config.step_epochs = spec.step_epochs;
    config.milestones = spec.milestones;
    config.min_lr = spec.min_lr;
    config.poly_power = spec.poly_power;
    config.epochs = spec.epochs;
    config.warmup = spec.warmup;
    config.warmup_length = spec.warmup_length;
    config.warmup_unit = spec.warmup_unit;
    config.warmup_start_factor = spec.warmup_start_factor;
    return config;
}

LrSchedule::LrSchedule(const RunSpec& spec, int steps_per_epoch)
    : LrSchedule(schedule_config(spec), steps_per_epoch) {}

LrSchedule::LrSchedule(const LrScheduleConfig& config, int steps_per_epoch)
    : config_(config), steps_per_epoch_(steps_per_epoch), total_steps_(0), warmup_length_(0) {
    // Epochs are counted in steps, so an epoch of no steps would divide by zero. It happens
    // when the dataset is smaller than one global batch (devices x batch per device).
    if (steps_per_epoch <= 0) {
        reject("an epoch must have at least one step (got " + std::to_string(steps_per_epoch) +
               " steps per epoch); use a smaller batch or fewer devices, or more data");
    }
    if (config_.kind == ScheduleKind::Step && config_.step_epochs <= 0) {
        reject("the step schedule needs step_epochs >= 1 (got " +
               std::to_string(config_.step_epochs) + ")");
    }
    if ((config_.kind == ScheduleKind::Cosine || config_.kind == ScheduleKind::Poly) &&
        config_.epochs <= 0) {
        reject("the " + std::string(to_string(config_.kind)) + " schedule needs epochs >= 1 (got " +
               std::to_string(config_.epochs) + ")");
    }
    if (config_.kind == ScheduleKind::Poly &&
        (!std::isfinite(config_.poly_power) || config_.poly_power <= 0)) {
        reject("the poly schedule needs a power above 0 (got " + format_number(config_.poly_power) +
               ")");
    }
    if (!std::isfinite(config_.warmup_length) || config_.warmup_length < 0) {
        reject("the warm-up length must be a number >= 0 (got " +
               format_number(config_.warmup_length) + "); use 0 for no warm-up");
    }
    if (!std::isfinite(config_.warmup_start_factor)) {
        reject("the warm-up start factor must be a number (got " +
               format_number(config_.warmup_start_factor) + ")");
    }
    if (config_.warmup == WarmupKind::PerEpoch && config_.warmup_unit != WarmupUnit::Epochs &&
        config_.warmup_length > 0) {
        reject("the per-epoch warm-up is measured in epochs (got " +
               format_number(config_.warmup_length) + " steps): give its length in epochs");
    }

    total_steps_ = static_cast<std::int64_t>(config_.epochs) * steps_per_epoch_;
    warmup_length_ = config_.warmup_unit == WarmupUnit::Steps
                         ? config_.warmup_length
                         : config_.warmup_length * static_cast<double>(steps_per_epoch_);
    // Also keeps warmup_steps() representable: total_steps_ < 2^62.
    if (warmup_length_ > static_cast<double>(std::max<std::int64_t>(total_steps_, 0))) {
        reject("the warm-up (" + steps_text(warmup_length_) + " steps) is longer than the run (" +
               std::to_string(total_steps_) + " steps = " + std::to_string(config_.epochs) +
               " epochs x " + std::to_string(steps_per_epoch_) +
               " steps per epoch): shorten the warm-up or train longer");
    }
    // MultiStepLR counts milestones as a multiset, so a repeated milestone decays twice; a
    // sorted copy turns "how many milestones <= epoch" into one binary search.
    std::sort(config_.milestones.begin(), config_.milestones.end());
}

double LrSchedule::scheduled_lr(std::int64_t step) const {
    if (step < 0) {
        throw Error(ErrorKind::Internal, "learning rate asked for step " + std::to_string(step) +
                                             "; steps count from 0");
    }
    const std::int64_t epoch = step / steps_per_epoch_;
    switch (config_.kind) {
        case ScheduleKind::Constant:
            return config_.base_lr;
        case ScheduleKind::Step:
            return config_.base_lr *
                   std::pow(config_.gamma, static_cast<double>(epoch / config_.step_epochs));
        case ScheduleKind::MultiStep: {
            // Milestones are ints; an epoch beyond int's range is past every one of them.
            const auto passed =
                epoch > std::numeric_limits<int>::max()
                    ? config_.milestones.size()
                    : static_cast<std::size_t>(std::upper_bound(config_.milestones.begin(),
                                                                config_.milestones.end(),
                                                                static_cast<int>(epoch)) -
                                               config_.milestones.begin());
            return config_.base_lr * std::pow(config_.gamma, static_cast<double>(passed));
        }
        case ScheduleKind::Cosine: {
            if (step >= total_steps_) {
                return config_.min_lr;
            }
            const double progress = static_cast<double>(step) / static_cast<double>(total_steps_);
            return config_.min_lr + (config_.base_lr - config_.min_lr) *
                                        (1.0 + std::cos(std::numbers::pi * progress)) / 2.0;
        }
        case ScheduleKind::Poly: {
            if (step >= total_steps_) {
                return 0.0;
            }
            const double progress = static_cast<double>(step) / static_cast<double>(total_steps_);
            return config_.base_lr * std::pow(1.0 - progress, config_.poly_power);
        }
        case ScheduleKind::Exp:
            return config_.base_lr * std::pow(config_.gamma, static_cast<double>(epoch));
    }
    throw Error(ErrorKind::Internal, "unknown schedule kind");
}

double LrSchedule::warmup_factor(std::int64_t step) const {
    if (step < 0) {
        throw Error(ErrorKind::Internal, "warm-up factor asked for step " + std::to_string(step) +
                                             "; steps count from 0");
    }
    if (warmup_length_ == 0) {
        return 1.0;
    }
    const double start = config_.warmup_start_factor;
    switch (config_.warmup) {
        case WarmupKind::Gradual: {
            const double t = std::min(static_cast<double>(step), warmup_length_);
            return start + (1.0 - start) * t / warmup_length_;
        }
        case WarmupKind::PerEpoch: {
            // W in epochs (the constructor accepts only that unit here).
            const double epochs = config_.warmup_length;
            const double e = std::min(static_cast<double>(step / steps_per_epoch_), epochs);
            return start + (1.0 - start) * e / epochs;
        }
        case WarmupKind::Constant:
            return static_cast<double>(step) < warmup_length_ ? start : 1.0;
    }
    throw Error(ErrorKind::Internal, "unknown warm-up kind");
}

double LrSchedule::lr(std::int64_t step) const {
    return scheduled_lr(step) * warmup_factor(step);
}

std::int64_t LrSchedule::warmup_steps() const {
    if (config_.warmup == WarmupKind::PerEpoch) {
        return static_cast<std::int64_t>(std::ceil(config_.warmup_length)) * steps_per_epoch_;
    }
    return static_cast<std::int64_t>(std::ceil(warmup_length_));
}

}  // namespace scalelab::optim
