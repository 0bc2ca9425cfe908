#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "run_group.h"
#include "run_record.h"

namespace scalelab {

// One run that reached the target: the steps and the training images it took to first reach it.
struct StepsToTargetPoint {
    int run_id = 0;
    int global_batch = 0;
    std::int64_t steps = 0;
    double images = 0;
};

// Steps to a validation accuracy target against the global batch, for the runs of a sweep
// (Shallue et al. 2018, "Measuring the Effects of Data Parallelism on Neural Network Training").
struct StepsToTarget {
    double target = 0;
    // By global batch, then steps, then run id: the first is the reference of perfect scaling.
    std::vector<StepsToTargetPoint> reached;
    std::vector<int> not_reached;  // run ids that ran but never reached it, in the order given
    // Perfect scaling keeps steps × batch constant through the first reached point:
    // steps(B) = steps_0 × B_0 / B, once at each batch of `reached`, ascending.
    std::vector<std::pair<int, double>> perfect_scaling;
};

// Where each run first reached `target`: its RunRecord::targets entry when it records that
// target, else the first evaluation in its ValAccuracy curve at or above it. Runs that have not
// started, or have no global batch, are left out.
StepsToTarget steps_to_target(const std::vector<const RunRecord*>& runs, double target);

// The members of one group of repeats (RunRecord::group) that reached the target, drawn as one
// point: the mean of their steps and images, with their spread for an error bar.
struct StepsToTargetGroup {
    QString group;
    int global_batch = 0;
    std::vector<int> run_ids;  // the members that reached it, in StepsToTarget::reached order
    Spread steps;
    Spread images;
};

// The groups of `runs` with at least two members in `result.reached`, in the order of their
// first such member there. A member that did not reach the target is in result.not_reached, not
// in the mean (which is then over the members that did: the count says how many).
std::vector<StepsToTargetGroup> steps_to_target_groups(const StepsToTarget& result,
                                                       const std::vector<const RunRecord*>& runs);

}  // namespace scalelab
