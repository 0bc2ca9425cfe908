#pragma once

#include <mutex>
#include <vector>

#include "train/metrics.h"

namespace scalelab::testing {

// Keeps everything a trainer reports, for tests to inspect afterwards.
class RecordingSink : public MetricsSink {
  public:
    void on_start(const RunInfo& info) override {
        std::lock_guard lock(mutex_);
        starts.push_back(info);
    }
    void on_step(const StepMetrics& m) override {
        std::lock_guard lock(mutex_);
        steps.push_back(m);
    }
    void on_epoch(const EpochMetrics& m) override {
        std::lock_guard lock(mutex_);
        epochs.push_back(m);
    }
    void on_end(const RunEnd& e) override {
        std::lock_guard lock(mutex_);
        ends.push_back(e);
    }

    std::vector<RunInfo> starts;
    std::vector<StepMetrics> steps;
    std::vector<EpochMetrics> epochs;
    std::vector<RunEnd> ends;

  private:
    std::mutex mutex_;
};

}  // namespace scalelab::testing
