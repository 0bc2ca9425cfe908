#pragma once

#include "train/metrics.h"

namespace scalelab {
class RunRecorder;
class Trainer;
}  // namespace scalelab

namespace scalelab::cli {

// Stands between the trainer and the sinks of `scalelab-cli train` (the printer, the JSONL
// file, the recorder) while the run is recorded in the run store: once a write to the store has
// failed, it cancels the run at its next report, and reports the run's end to the sinks as
// failed with the reason, so that a run the user asked to keep does not train on unrecorded.
class RecordingGuard final : public MetricsSink {
  public:
    RecordingGuard(MetricsSink& sinks, const RunRecorder& recorder)
        : sinks_(sinks), recorder_(recorder) {}

    // The trainer to cancel; set before it runs.
    void guard(Trainer& trainer) { trainer_ = &trainer; }

    void on_start(const RunInfo& info) override { sinks_.on_start(info); }
    void on_step(const StepMetrics& step) override;
    void on_epoch(const EpochMetrics& epoch) override;
    void on_end(const RunEnd& end) override;

  private:
    void cancel_when_failed();

    MetricsSink& sinks_;
    const RunRecorder& recorder_;
    Trainer* trainer_ = nullptr;
};

}  // namespace scalelab::cli
