#pragma once

#include <cstdint>
#include <vector>

#include "train/run_spec.h"

namespace scalelab::optim {

// The schedule's inputs, separate from RunSpec so that an LR scaling rule (linear or
// square-root in the number of devices) can hand over a scaled base_lr without touching the
// spec. schedule_config(spec) copies the spec's fields unchanged.
struct LrScheduleConfig {
    double base_lr = 0.05;
    ScheduleKind kind = ScheduleKind::Constant;
    double gamma = 0.1;           // Step, MultiStep: decay factor
    int step_epochs = 30;         // Step: decay every step_epochs epochs
    std::vector<int> milestones;  // MultiStep: decay at these epochs (repeats decay repeatedly)
    double min_lr = 0.0;          // Cosine: the floor
    int epochs = 1;               // Cosine: the length of the run it anneals over
    double warmup = 0.0;          // warm-up length in warmup_unit; 0: none
    WarmupUnit warmup_unit = WarmupUnit::Epochs;
    double warmup_start_factor = 0.1;
};

LrScheduleConfig schedule_config(const RunSpec& spec);

// The learning rate of every step, a pure function of the step index (counted from 0), so any
// replica, a resumed run or the UI's preview computes the same value.
//
//   lr(step) = schedule(step) * warmup(step)
//
// The schedules follow PyTorch's schedulers stepped once per epoch, with
//   epoch = step / steps_per_epoch   (integer division):
//   Constant:  base_lr
//   Step:      base_lr * gamma^(epoch / step_epochs)            (integer division; StepLR)
//   MultiStep: base_lr * gamma^(number of milestones <= epoch)  (MultiStepLR)
// except Cosine, which anneals per step over the whole run, total = epochs * steps_per_epoch:
//   Cosine:    min_lr + (base_lr - min_lr) * (1 + cos(pi * step / total)) / 2
//              (CosineAnnealingLR with T_max = total stepped every step; steps past the end
//              of the run stay at min_lr rather than rising again)
//
// The warm-up (Goyal et al., "Accurate, Large Minibatch SGD") multiplies on top, a smooth ramp
// per step even when its length is given in epochs:
//   W = warmup                      (warmup_unit Steps)
//   W = warmup * steps_per_epoch    (warmup_unit Epochs; may be fractional)
//   warmup(step) = start + (1 - start) * min(step, W) / W,   start = warmup_start_factor
//   warmup(step) = 1 when W == 0
// so step 0 runs at start * schedule(0) and step W (the first at or past W) at the full rate.
class LrSchedule {
  public:
    // Throws Error(InvalidSpec) for steps_per_epoch <= 0, and for the values that would make
    // the formulas undefined: step_epochs <= 0 with Step, epochs <= 0 with Cosine, a negative
    // or non-finite warm-up length.
    LrSchedule(const LrScheduleConfig& config, int steps_per_epoch);
    LrSchedule(const RunSpec& spec, int steps_per_epoch);

    // The learning rate of `step` (from 0). Throws Error(Internal) for a negative step.
    double lr(std::int64_t step) const;

    // The two factors of lr(step) separately, for charts that show them apart:
    // lr(step) == scheduled_lr(step) * warmup_factor(step).
    double scheduled_lr(std::int64_t step) const;
    double warmup_factor(std::int64_t step) const;

    // The number of steps whose warm-up factor is below 1: ceil(W) (0 without warm-up).
    std::int64_t warmup_steps() const;

    // epochs * steps_per_epoch: the run's length, over which Cosine anneals.
    std::int64_t total_steps() const { return total_steps_; }
    int steps_per_epoch() const { return steps_per_epoch_; }
    const LrScheduleConfig& config() const { return config_; }

  private:
    LrScheduleConfig config_;  // milestones sorted
    int steps_per_epoch_;
    std::int64_t total_steps_;
    double warmup_length_;  // W, in steps
};

}  // namespace scalelab::optim
