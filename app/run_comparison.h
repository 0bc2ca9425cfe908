#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "run_collection.h"
#include "train/run_spec.h"

namespace scalelab {

// Whether two specs are the same experiment apart from how many devices run it: every setting
// equal except `devices` and `threads` (compared as their JSON config, so a new RunSpec field
// counts without a change here). Identical specs count too.
bool differs_only_in_devices(const RunSpec& a, const RunSpec& b);

// Scaling efficiency of run `id`: its mean images/s over (devices × the mean images/s of the
// 1-device runs that differ from it only in devices; when there are several, their mean).
// 1.0 is perfect linear scaling. Nothing when the run is unknown, has one device, has no images/s
// yet, or there is no such 1-device run with images/s.
std::optional<double> scaling_efficiency(const RunCollection& runs, int id);

// One run in a scaling group.
struct ScalingPoint {
    int devices = 0;
    double images_per_s = 0;  // RunRecord::mean_images_per_s()
    int run_id = 0;
    // images_per_s over the ideal linear figure from the group's base:
    // images_per_s / (base_images_per_s × devices / base_devices).
    double efficiency = 0;
};

// Runs that differ only in device count, each with a mean images/s: what the scaling view draws.
struct ScalingGroup {
    QString label;  // the shared configuration, short (no device count); unique among groups
    // The group's smallest device count, and the mean images/s of its runs at that count: the
    // start of the ideal linear line.
    int base_devices = 0;
    double base_images_per_s = 0;
    std::vector<ScalingPoint> points;  // by device count, then run id
};

// The ideal linear figure for `devices` devices: base_images_per_s × devices / base_devices.
double ideal_images_per_s(const ScalingGroup& group, int devices);

// Every group of runs with images/s that differ only in device count and cover at least two
// device counts, in the order of their first run in RunCollection::ids().
std::vector<ScalingGroup> scaling_groups(const RunCollection& runs);

}  // namespace scalelab
