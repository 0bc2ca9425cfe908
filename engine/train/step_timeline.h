#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "train/metrics.h"

namespace scalelab {

// Where one device's step time goes (DeviceStepTimes), measured in the backend's own stream of
// work: a Timestamp at the step's start and one at the end of each phase, read once, after the
// step. On a GPU they are events: the breakdown is the GPU's time, and the step enqueues backward
// and the optimizer without waiting for either (one wait per step, not one per phase). A phase
// that runs on the host (waiting for a batch, for the other devices) ends at a timestamp marked
// when the host is done with it, which the stream reaches once the work before it is done: its
// time on the stream is what it added to the step. The exposed communication ends at a
// timestamp marked once the stream waits for the last bucket's all-reduce (Backend::wait_for):
// on a GPU, the stream's own wait.
//
//   timeline.start();
//   ... fetch a batch ...  timeline.end(&DeviceStepTimes::data);
//   ... forward ...        timeline.end(&DeviceStepTimes::forward);
//   timeline.add_to(times);  // waits for the last timestamp, adds each phase's seconds
//
// A phase may end several times in a step (micro-batches): its times add up.
class StepTimeline {
  public:
    using Phase = double DeviceStepTimes::*;

    // Makes every timestamp a step may use now (none while a step runs): one for the start and
    // one per phase end, at most `max_phase_ends` in a step.
    StepTimeline(Backend& backend, std::size_t max_phase_ends);

    void start();
    void end(Phase phase);
    void add_to(DeviceStepTimes& times);

  private:
    std::vector<std::unique_ptr<Timestamp>> timestamps_;  // [0] the start, [i] phase i's end
    std::vector<Phase> phases_;                           // the phases ended, in order
};

}  // namespace scalelab
