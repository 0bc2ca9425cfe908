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

}  // namespace

LrScheduleConfig schedule_config(const RunSpec& spec) {
    LrScheduleConfig config;
    config.base_lr = spec.lr;
    config.kind = spec.schedule;
    config.gamma = spec.gamma;
    config.step_epochs = spec.step_epochs;
    config.milestones = spec.milestones;
    config.min_lr = spec.min_lr;
    config.epochs = spec.epochs;
    config.warmup = spec.warmup;
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
    if (config_.kind == ScheduleKind::Cosine && config_.epochs <= 0) {
        reject("the cosine schedule needs epochs >= 1 (got " + std::to_string(config_.epochs) +
               ")");
    }
    if (!std::isfinite(config_.warmup) || config_.warmup < 0) {
        reject("the warm-up length must be a number >= 0 (got " + format_number(config_.warmup) +
               "); use 0 for no warm-up");
    }
    if (!std::isfinite(config_.warmup_start_factor)) {
        reject("the warm-up start factor must be a number (got " +
               format_number(config_.warmup_start_factor) + ")");
    }

    total_steps_ = static_cast<std::int64_t>(config_.epochs) * steps_per_epoch_;
    warmup_length_ = config_.warmup_unit == WarmupUnit::Steps
                         ? config_.warmup
                         : config_.warmup * static_cast<double>(steps_per_epoch_);
    // 2^62 steps is far beyond any run and keeps warmup_steps() representable.
    if (warmup_length_ > 0x1p62) {
        reject("the warm-up is longer than any run can be (" + format_number(config_.warmup) + ")");
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
    const double t = std::min(static_cast<double>(step), warmup_length_);
    return start + (1.0 - start) * t / warmup_length_;
}

double LrSchedule::lr(std::int64_t step) const {
    return scheduled_lr(step) * warmup_factor(step);
}

std::int64_t LrSchedule::warmup_steps() const {
    return static_cast<std::int64_t>(std::ceil(warmup_length_));
}

}  // namespace scalelab::optim
