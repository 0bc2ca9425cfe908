#pragma once

#include <cstdint>
#include <vector>

#include "train/run_spec.h"

namespace scalelab::optim {

// The schedule's inputs, separate from RunSpec so that an LR scaling rule (linear or
// square-root in the number of devices) can hand over a scaled base_lr without touching the
// spec. schedule_config(spec) copies the spec's fields, with base_lr = effective_lr(spec) (the
// spec's lr times its scaling rule).
struct LrScheduleConfig {
    double base_lr = 0.05;
    ScheduleKind kind = ScheduleKind::Constant;
    double gamma = 0.1;           // Step, MultiStep: decay factor; Exp: decay per epoch
    int step_epochs = 30;         // Step: decay every step_epochs epochs
    std::vector<int> milestones;  // MultiStep: decay at these epochs (repeats decay repeatedly)
    double min_lr = 0.0;          // Cosine: the floor
    double poly_power = 2.0;      // Poly: the power of (1 - step / total)
    int epochs = 1;               // Cosine, Poly: the length of the run they decay over
    WarmupKind warmup = WarmupKind::Gradual;
    double warmup_length = 0.0;  // warm-up length in warmup_unit; 0: none
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
//   Exp:       base_lr * gamma^epoch                            (ExponentialLR)
// except Cosine and Poly, which decay per step over the whole run,
// total = epochs * steps_per_epoch:
//   Cosine:    min_lr + (base_lr - min_lr) * (1 + cos(pi * step / total)) / 2
//              (CosineAnnealingLR with T_max = total stepped every step; steps past the end
//              of the run stay at min_lr rather than rising again)
//   Poly:      base_lr * (1 - step / total)^poly_power           (PolynomialLR stepped every
//              step; 0 at step total and after)
//
// The warm-up multiplies on top of any schedule. Its length W, start = warmup_start_factor:
//   Gradual (Goyal et al., "Accurate, Large Minibatch SGD"): a ramp per step, even when its
//   length is given in epochs,
//     W = warmup_length                      (warmup_unit Steps)
//     W = warmup_length * steps_per_epoch    (warmup_unit Epochs; may be fractional)
//     warmup(step) = start + (1 - start) * min(step, W) / W
//   so step 0 runs at start * schedule(0) and step W (the first at or past W) at the full rate.
//   PerEpoch (the course's): the same ramp stepped once per epoch, W = warmup_length in epochs
//   (warmup_unit must be Epochs),
//     warmup(step) = start + (1 - start) * min(epoch, W) / W,   epoch = step / steps_per_epoch
//   so all of epoch 0 runs at start (the course takes start = 1/N for N devices) and epoch
//   ceil(W) and later at the full rate.
//   Constant (Goyal et al.'s counter-example): W in steps as for Gradual,
//     warmup(step) = start for step < W, then 1: a jump at step ceil(W).
//   warmup(step) = 1 for every kind when W == 0.
class LrSchedule {
  public:
    // Throws Error(InvalidSpec) for steps_per_epoch <= 0, and for the values that would make
    // the formulas undefined: step_epochs <= 0 with Step, epochs <= 0 with Cosine or Poly, a
    // non-positive or non-finite poly_power with Poly, a negative or non-finite warm-up length,
    // a PerEpoch warm-up given in steps, and a warm-up longer than the run (W in steps, for
    // PerEpoch W * steps_per_epoch, above total_steps()).
    LrSchedule(const LrScheduleConfig& config, int steps_per_epoch);
    LrSchedule(const RunSpec& spec, int steps_per_epoch);

    // The learning rate of `step` (from 0). Throws Error(Internal) for a negative step.
    double lr(std::int64_t step) const;

    // The two factors of lr(step) separately, for charts that show them apart:
    // lr(step) == scheduled_lr(step) * warmup_factor(step).
    double scheduled_lr(std::int64_t step) const;
    double warmup_factor(std::int64_t step) const;

    // The number of steps before the warm-up reaches the full rate: ceil(W) for Gradual and
    // Constant, ceil(W) * steps_per_epoch for PerEpoch (0 without warm-up).
    std::int64_t warmup_steps() const;

    // epochs * steps_per_epoch: the run's length, over which Cosine and Poly decay.
    std::int64_t total_steps() const { return total_steps_; }
    int steps_per_epoch() const { return steps_per_epoch_; }
    const LrScheduleConfig& config() const { return config_; }

  private:
    LrScheduleConfig config_;  // milestones sorted
    int steps_per_epoch_;
    std::int64_t total_steps_;
    double warmup_length_;  // W, in steps (PerEpoch: warmup_length * steps_per_epoch)
};

}  // namespace scalelab::optim
