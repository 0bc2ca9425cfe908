#include "time_breakdown.h"

#include <algorithm>
#include <array>
#include <cstddef>

namespace scalelab {

namespace {

// What each phase is called on screen and in JSON, and which field of DeviceStepTimes holds it:
// one row per StepPhase, in its order.
struct PhaseInfo {
    std::string_view name, key;
    double DeviceStepTimes::*seconds;
};
constexpr std::array<PhaseInfo, step_phase_count> kPhases = {{
    {"data", "data", &DeviceStepTimes::data},
    {"forward", "forward", &DeviceStepTimes::forward},
    {"backward", "backward", &DeviceStepTimes::backward},
    {"exposed communication", "exposed_comm", &DeviceStepTimes::exposed_comm},
    {"waiting", "wait", &DeviceStepTimes::wait},
    {"optimizer", "optimizer", &DeviceStepTimes::optimizer},
}};

const PhaseInfo& info(StepPhase phase) {
    return kPhases[static_cast<std::size_t>(phase)];
}

}  // namespace

std::string_view step_phase_name(StepPhase phase) {
    return info(phase).name;
}

std::string_view step_phase_key(StepPhase phase) {
    return info(phase).key;
}

double phase_seconds(const DeviceStepTimes& times, StepPhase phase) {
    return times.*info(phase).seconds;
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
