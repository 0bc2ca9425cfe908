#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "run_record.h"

namespace scalelab {

// The parts of a step a device's time goes to (DeviceStepTimes), in the order a step runs them.
enum class StepPhase { Data, Forward, Backward, ExposedComm, Wait, Optimizer };
inline constexpr int step_phase_count = 6;
inline constexpr std::array<StepPhase, step_phase_count> all_step_phases = {
    StepPhase::Data,        StepPhase::Forward, StepPhase::Backward,
    StepPhase::ExposedComm, StepPhase::Wait,    StepPhase::Optimizer};

// "data", "forward", "backward", "exposed communication", "waiting", "optimizer".
std::string_view step_phase_name(StepPhase);
// Its key in the JSON ScaleLab writes (the metrics JSONL, `bench train --json` with "_ms"):
// "data", "forward", "backward", "exposed_comm", "wait", "optimizer".
std::string_view step_phase_key(StepPhase);
// That phase's seconds in one device's step.
double phase_seconds(const DeviceStepTimes&, StepPhase);

// The timings whose step lies in [first_step, last_step], `timings` being in ascending step order
// (as RunRecord::timings); empty when first_step > last_step.
std::span<const StepTiming> timings_in(const std::vector<StepTiming>& timings,
                                       std::int64_t first_step, std::int64_t last_step);

// Mean seconds per step of each phase on each device over the steps first..last (inclusive).
struct TimeBreakdown {
    std::int64_t first_step = 0, last_step = 0;                 // the steps actually averaged
    int steps = 0;                                              // 0: no timing in the window
    double step_seconds = 0;                                    // mean wall time of those steps
    std::vector<std::array<double, step_phase_count>> devices;  // rank order
};

// Over the n timings_in(timings, first_step, last_step):
//   step_seconds = sum(seconds) / n
//   devices[r][p] = sum over those steps of phase_seconds(devices[r], p) / (steps reporting r)
// Every step of a run reports the same devices, so the divisor is n; devices has as many
// entries as the step reporting the most. An empty window (none there, or first > last) gives
// steps = 0 and no devices.
TimeBreakdown mean_time_breakdown(const std::vector<StepTiming>& timings, std::int64_t first_step,
                                  std::int64_t last_step);

}  // namespace scalelab
