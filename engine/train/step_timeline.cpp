#include "train/step_timeline.h"

#include <string>

#include "error.h"

namespace scalelab {

StepTimeline::StepTimeline(Backend& backend, std::size_t max_phase_ends) {
    for (std::size_t i = 0; i <= max_phase_ends; ++i)
        timestamps_.push_back(backend.make_timestamp());
    phases_.reserve(max_phase_ends);
}

void StepTimeline::start() {
    phases_.clear();
    timestamps_[0]->mark();
}

void StepTimeline::end(Phase phase) {
    if (phases_.size() + 1 == timestamps_.size())
        throw Error(ErrorKind::Internal, "a step ended more than the " +
                                             std::to_string(phases_.size()) +
                                             " phases its timeline was made for");
    phases_.push_back(phase);
    timestamps_[phases_.size()]->mark();
}

void StepTimeline::add_to(DeviceStepTimes& times) {
    // Phase i lasted from the timestamp before its end to its end: t_{i+1} - t_i.
    for (std::size_t i = 0; i < phases_.size(); ++i)
        times.*phases_[i] += timestamps_[i + 1]->seconds_since(*timestamps_[i]);
    phases_.clear();
}

}  // namespace scalelab
