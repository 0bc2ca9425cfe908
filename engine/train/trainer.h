#pragma once

#include <atomic>

#include "data/dataset.h"
#include "train/metrics.h"
#include "train/run_spec.h"

namespace scalelab {

// Trains one run on one device (the CPU, with spec.threads cores) and reports through a sink.
// The caller loads the data first (data::load_dataset), so that a missing or corrupt dataset is
// reported before a run starts.
class Trainer {
  public:
    // Throws Error(InvalidSpec) listing every problem when the spec does not validate, and when
    // the data does not fit the model (channels, image size not divisible by 4).
    Trainer(RunSpec spec, const data::TrainTest& data, MetricsSink& sink);

    // Runs to the end and returns how it ended (also reported to sink.on_end). Never throws:
    // a failure inside the run ends it as RunStatus::Failed with the error's message.
    RunEnd run();

    // Safe from any thread; the run stops before its next step and ends as Cancelled.
    void cancel() { cancelled_.store(true, std::memory_order_relaxed); }

  private:
    RunEnd train();

    RunSpec spec_;
    const data::TrainTest& data_;
    MetricsSink& sink_;
    std::atomic<bool> cancelled_{false};
};

}  // namespace scalelab
