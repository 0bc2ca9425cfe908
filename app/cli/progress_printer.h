#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>

#include "train/metrics.h"

namespace scalelab::cli {

// What a person watching `scalelab-cli train` sees: on a terminal, one progress line redrawn in
// place (epoch, step/steps, loss, images/s, ETA) at most ten times a second; always one summary
// line per epoch and a final line with the status and message.
class ProgressPrinter : public MetricsSink {
  public:
    ProgressPrinter(std::FILE* out, int epochs, bool draw_bar);

    void on_step(const StepMetrics&) override;
    void on_epoch(const EpochMetrics&) override;
    void on_end(const RunEnd&) override;

  private:
    using Clock = std::chrono::steady_clock;

    void draw_bar(const StepMetrics&, Clock::time_point now);
    void clear_bar();

    std::FILE* out_;
    int epochs_;
    bool draw_bar_;

    std::mutex mutex_;  // the trainer may report from more than one worker thread
    bool bar_shown_ = false;
    Clock::time_point epoch_start_;  // when the epoch's first step was reported
    Clock::time_point last_draw_;
    double smoothed_images_per_s_ = 0;
};

}  // namespace scalelab::cli
