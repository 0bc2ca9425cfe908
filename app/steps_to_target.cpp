#include "steps_to_target.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>

namespace scalelab {

namespace {

// Targets are fractions given with a few decimals: a recorded 0.9 is the 0.9 asked for even
// when the two were computed differently (90 / 100.0).
constexpr double same_target = 1e-9;

std::optional<StepsToTargetPoint> first_reached(const RunRecord& run, double target) {
    const auto recorded =
        std::find_if(run.targets.cbegin(), run.targets.cend(), [&](const TargetReached& reached) {
            return std::abs(reached.target - target) < same_target;
        });
    if (recorded != run.targets.cend())
        return StepsToTargetPoint{.run_id = run.id,
                                  .global_batch = run.info.global_batch,
                                  .steps = recorded->step,
                                  .images = recorded->images};
    const std::vector<MetricPoint>& accuracy = run.curve(Metric::ValAccuracy);
    const auto evaluated =
        std::find_if(accuracy.cbegin(), accuracy.cend(),
                     [&](const MetricPoint& point) { return point.value >= target; });
    if (evaluated != accuracy.cend())
        return StepsToTargetPoint{.run_id = run.id,
                                  .global_batch = run.info.global_batch,
                                  .steps = evaluated->step,
                                  .images = evaluated->samples};
    return std::nullopt;
}

}  // namespace

StepsToTarget steps_to_target(const std::vector<const RunRecord*>& runs, double target) {
    StepsToTarget result;
    result.target = target;
    for (const RunRecord* run : runs) {
        if (run == nullptr || !run->started || run->info.global_batch <= 0)
            continue;
        if (const auto point = first_reached(*run, target))
            result.reached.push_back(*point);
        else
            result.not_reached.push_back(run->id);
    }
    std::sort(result.reached.begin(), result.reached.end(),
              [](const StepsToTargetPoint& a, const StepsToTargetPoint& b) {
                  return std::tie(a.global_batch, a.steps, a.run_id) <
                         std::tie(b.global_batch, b.steps, b.run_id);
              });
    if (result.reached.empty())
        return result;
    const StepsToTargetPoint& reference = result.reached.front();
    const double work = double(reference.steps) * reference.global_batch;
    for (const StepsToTargetPoint& point : result.reached)
        if (result.perfect_scaling.empty() ||
            result.perfect_scaling.back().first != point.global_batch)
            result.perfect_scaling.emplace_back(point.global_batch, work / point.global_batch);
    return result;
}

}  // namespace scalelab
