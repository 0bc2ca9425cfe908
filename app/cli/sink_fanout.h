#pragma once

#include <vector>

#include "train/metrics.h"

namespace scalelab::cli {

// Passes each event to several sinks in turn (the printer, the JSONL file): the trainer reports
// to one.
class SinkFanout : public MetricsSink {
  public:
    explicit SinkFanout(std::vector<MetricsSink*> sinks) : sinks_(std::move(sinks)) {}

    void on_start(const RunInfo& info) override {
        for (MetricsSink* sink : sinks_)
            sink->on_start(info);
    }
    void on_step(const StepMetrics& m) override {
        for (MetricsSink* sink : sinks_)
            sink->on_step(m);
    }
    void on_epoch(const EpochMetrics& m) override {
        for (MetricsSink* sink : sinks_)
            sink->on_epoch(m);
    }
    void on_end(const RunEnd& end) override {
        for (MetricsSink* sink : sinks_)
            sink->on_end(end);
    }

  private:
    std::vector<MetricsSink*> sinks_;
};

}  // namespace scalelab::cli
