#include "time_breakdown.h"

#include <algorithm>

namespace scalelab {

std::string_view step_phase_name(StepPhase phase) {
    switch (phase) {
        case StepPhase::Data:
            return "data";
        case StepPhase::Forward:
            return "forward";
        case StepPhase::Backward:
            return "backward";
        case StepPhase::ExposedComm:
            return "exposed communication";
        case StepPhase::Wait:
            return "waiting";
        case StepPhase::Optimizer:
            return "optimizer";
    }
    return {};
}

std::string_view step_phase_key(StepPhase phase) {
    switch (phase) {
        case StepPhase::Data:
            return "data";
        case StepPhase::Forward:
            return "forward";
        case StepPhase::Backward:
            return "backward";
        case StepPhase::ExposedComm:
            return "exposed_comm";
        case StepPhase::Wait:
            return "wait";
        case StepPhase::Optimizer:
            return "optimizer";
    }
    return {};
}

double phase_seconds(const DeviceStepTimes& times, StepPhase phase) {
    switch (phase) {
        case StepPhase::Data:
            return times.data;
        case StepPhase::Forward:
            return times.forward;
        case StepPhase::Backward:
            return times.backward;
        case StepPhase::ExposedComm:
            return times.exposed_comm;
        case StepPhase::Wait:
            return times.wait;
        case StepPhase::Optimizer:
            return times.optimizer;
    }
    return 0;
}

std::span<const StepTiming> timings_in(const std::vector<StepTiming>& timings,
                                       std::int64_t first_step, std::int64_t last_step) {
    const auto begin = std::partition_point(
        timings.begin(), timings.end(), [&](const StepTiming& t) { return t.step < first_step; });
    const auto end = std::partition_point(begin, timings.end(),
                                          [&](const StepTiming& t) { return t.step <= last_step; });
    return {begin, end};
}

TimeBreakdown mean_time_breakdown(const std::vector<StepTiming>& timings, std::int64_t first_step,
                                  std::int64_t last_step) {
    TimeBreakdown out;
    const auto window = timings_in(timings, first_step, last_step);
    if (window.empty())
        return out;
    out.first_step = window.front().step;
    out.last_step = window.back().step;
    out.steps = int(window.size());
    std::vector<int> reported;  // steps reporting each device
    for (const StepTiming& t : window) {
        out.step_seconds += t.seconds;
        if (t.devices.size() > out.devices.size()) {
            out.devices.resize(t.devices.size(), {});
            reported.resize(t.devices.size(), 0);
        }
        for (std::size_t r = 0; r < t.devices.size(); ++r) {
            for (std::size_t p = 0; p < all_step_phases.size(); ++p)
                out.devices[r][p] += phase_seconds(t.devices[r], all_step_phases[p]);
            ++reported[r];
        }
    }
    out.step_seconds /= out.steps;
    for (std::size_t r = 0; r < out.devices.size(); ++r)
        for (double& seconds : out.devices[r])
            seconds /= reported[r];
    return out;
}

}  // namespace scalelab
