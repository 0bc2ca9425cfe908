#include "steps_to_target.h"

#include <algorithm>
#include <cmath>
#include <map>
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

std::vector<StepsToTargetGroup> steps_to_target_groups(const StepsToTarget& result,
                                                       const std::vector<const RunRecord*>& runs) {
    std::map<int, QString> group_of;
    for (const RunRecord* run : runs)
        if (run != nullptr && !run->group.isEmpty())
            group_of[run->id] = run->group;
    std::vector<std::vector<const StepsToTargetPoint*>> members;
    std::map<QString, std::size_t> index;
    for (const StepsToTargetPoint& point : result.reached) {
        const auto group = group_of.find(point.run_id);
        if (group == group_of.end())
            continue;
        const auto [at, added] = index.try_emplace(group->second, members.size());
        if (added)
            members.emplace_back();
        members[at->second].push_back(&point);
    }
    std::vector<StepsToTargetGroup> groups;
    for (const auto& [group, at] : index) {
        const std::vector<const StepsToTargetPoint*>& points = members[at];
        if (points.size() < 2)
            continue;
        StepsToTargetGroup drawn{.group = group,
                                 .global_batch = points.front()->global_batch,
                                 .run_ids = {},
                                 .steps = {},
                                 .images = {}};
        std::vector<double> steps;
        std::vector<double> images;
        for (const StepsToTargetPoint* point : points) {
            drawn.run_ids.push_back(point->run_id);
            steps.push_back(double(point->steps));
            images.push_back(point->images);
        }
        drawn.steps = *spread_of(steps);
        drawn.images = *spread_of(images);
        groups.push_back(std::move(drawn));
    }
    // In the order of each group's first member in `reached`.
    std::sort(groups.begin(), groups.end(),
              [&](const auto& a, const auto& b) { return index.at(a.group) < index.at(b.group); });
    return groups;
}

}  // namespace scalelab
