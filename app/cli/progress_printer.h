#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "train/metrics.h"
#include "train/run_spec.h"

namespace scalelab::cli {

// What a person watching `scalelab-cli train` sees: a line describing the run (devices, threads,
// cores, global batch, steps, parameters, the optimiser and the effective learning rate with its
// scaling rule; its warnings go to the log); on a terminal, one progress line redrawn in place
// (epoch, step/steps, loss, images/s, ETA) at most ten times a second; always one summary line
// per epoch (with the accuracy targets first reached at it and, for more than one device, where a
// device's step time went, in milliseconds per step averaged over the epoch's steps and the
// devices) and a final line with the status, the message and every target reached, then one
// saying so when other programs used a good share of the cores (RunRecord::disturbed()).
class ProgressPrinter : public MetricsSink {
  public:
    ProgressPrinter(std::FILE* out, const RunSpec& spec, bool draw_bar);

    void on_start(const RunInfo&) override;
    void on_step(const StepMetrics&) override;
    void on_epoch(const EpochMetrics&) override;
    void on_end(const RunEnd&) override;

  private:
    using Clock = std::chrono::steady_clock;

    void draw_bar(const StepMetrics&, Clock::time_point now);
    void clear_bar();
    std::string breakdown_text() const;

    std::FILE* out_;
    int epochs_;
    std::string optimiser_text_;   // "lars, lr 0.05 x linear(512/256) = 0.1"
    std::vector<double> targets_;  // the accuracies whose time to reach the run records
    bool draw_bar_;

    std::mutex mutex_;  // the trainer may report from more than one worker thread
    bool bar_shown_ = false;
    Clock::time_point epoch_start_;  // when the epoch's first step was reported
    Clock::time_point last_draw_;
    double smoothed_images_per_s_ = 0;

    // The epoch's per-device step times so far: their sums, and how many (step, device) pairs.
    DeviceStepTimes epoch_times_;
    std::int64_t epoch_device_steps_ = 0;
    std::size_t devices_seen_ = 0;  // the most devices a step of this epoch reported
    // Device steps of this epoch with time between processes (one device of each process).
    std::int64_t epoch_exchanging_steps_ = 0;
    // The last epoch's EpochMetrics::other_programs_share (NaN: none yet, or not measured).
    double other_programs_share_ = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace scalelab::cli
