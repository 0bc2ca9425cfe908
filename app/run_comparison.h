#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "run_collection.h"
#include "train/run_spec.h"

namespace scalelab {

// Scaling efficiency, the one definition every view uses (docs/scaling.md):
//
//   efficiency = images/s of the run / ideal,
//   ideal      = images/s of its baseline × (the run's cores / the baseline's cores)
//
// where the baseline is a 1-device run of the same configuration on the same compute unit:
//  - GPUs: one GPU per device, so the ideal is devices × the baseline;
//  - CPU devices with a fixed number of threads T (RunSpec::threads > 0, the default 1): a
//    1-device run with T threads, so the ideal is again devices × the baseline;
//  - CPU devices sharing all cores (RunSpec::threads == 0): a 1-device run on the same total of
//    threads, and the devices, dividing the same cores, ideally match it: the ideal is the
//    baseline itself.
// Seeds may differ (they change what is learnt, not the speed); every other setting must match.
// Of the runs that qualify, the baseline is the collection's baseline run when it is one of
// them, or else the most recent one shown on the charts that other programs did not disturb
// (RunRecord::disturbed(); a disturbed one only when every one was). Never an average of runs.

// Whether two specs are the same experiment apart from how many devices run it, on what
// threads, and with which seed: every other setting equal (compared as their JSON config, so a
// new RunSpec field counts without a change here). Identical specs count too.
bool differs_only_in_devices(const RunSpec& a, const RunSpec& b);

// Whether the devices of two started runs are the same unit of compute, so that their images/s
// compare: both GPUs, or CPU devices with the same threads per device on as many cores.
bool same_device_unit(const RunRecord& a, const RunRecord& b);

// A run's scaling efficiency, or why it has none.
struct ScalingEfficiency {
    std::optional<double> value;  // 1.0 is perfect scaling; nothing without a baseline
    int baseline_id = 0;          // the 1-device run compared with; 0 when none
    double ideal_images_per_s = 0;
    // For a tooltip: "1,800 images/s against 2 × 1,000 of “1 device” (1 device × 1 thread)", or
    // "no 1-device run to compare with: ..." saying which run would do.
    QString explanation;
    // Set when the devices share the cores (RunSpec::threads == 0): the baseline is the 1-device
    // run on the same cores, not devices × a 1-device run.
    bool same_total_cores = false;
};

// The scaling efficiency of run `id`; nothing when it does not apply: the run is unknown, has
// one device, or has no images/s yet.
std::optional<ScalingEfficiency> scaling_efficiency(const RunCollection& runs, int id);

// The runs at one device count of a scaling group: repeats of the same configuration.
struct ScalingPoint {
    int devices = 0;
    double images_per_s = 0;         // the mean of the runs' RunRecord::mean_images_per_s()
    double stddev_images_per_s = 0;  // their sample standard deviation (0 for one run)
    double min_images_per_s = 0;
    double max_images_per_s = 0;
    // In RunCollection::ids() order. Runs other programs disturbed are left out when there are
    // others at the same device count.
    std::vector<int> run_ids;
    bool disturbed = false;  // every run at this count was disturbed
    // The definition above, with the 1-device point's mean as the baseline; nothing when the
    // group has no 1-device point.
    std::optional<double> ideal_images_per_s;
    std::optional<double> efficiency;
};

// Shown runs with images/s that differ only in device count (and seed), on the same compute
// unit: what the scaling view draws.
struct ScalingGroup {
    // The shared configuration, short (no device count); unique among groups.
    QString label;
    std::vector<ScalingPoint> points;  // one per device count, ascending
    // Whether the group has a 1-device point, the baseline of every other point.
    bool has_baseline() const { return !points.empty() && points.front().devices == 1; }
};

// Every group of shown runs with images/s that covers at least two device counts, in the order
// of their first run in RunCollection::ids().
std::vector<ScalingGroup> scaling_groups(const RunCollection& runs);

}  // namespace scalelab
