#pragma once

#include <QString>

#include <optional>
#include <vector>

#include "run_record.h"

namespace scalelab {

// A sentence about a run worth seeing at a glance, and where on which curve it belongs (no
// point: it is about the whole run). The run table lists them; the charts write each one that
// has a point beside it.
struct RunAnnotation {
    QString text;
    Metric metric = Metric::TrainLoss;
    std::optional<MetricPoint> at;
};

// How many epochs a run trains before a training loss no lower than its first epoch's counts as
// stalled.
inline constexpr int stalled_after_epochs = 3;

// What is worth saying about `run`, the problems first:
//  - "diverged at step 412 (loss NaN) – LR 3.2, no warm-up": a diverged run, on the training
//    loss at its last finite point;
//  - "stalled: training loss 2.31 at epoch 4, not below 2.3 at epoch 1": a run that trained at
//    least stalled_after_epochs epochs without its epoch loss falling below the first epoch's,
//    on the training loss at the end of its last epoch;
//  - "no warm-up for LR 0.8, scaled up for global batch 2048": the scaling rule raised the LR
//    and nothing eases into it (large batches need warm-up); not said of a diverged run, whose
//    divergence already says it;
//  - "8 devices on 2 cores: throughput cannot scale": more threads than cores;
//  - "other programs used 45% of the cores during this run: its images/s may be low": a
//    disturbed run (RunRecord::disturbed());
//  - "reached 0.90 at epoch 3 (41 s)": each epoch at which targets were first reached, on the
//    validation accuracy of that epoch.
std::vector<RunAnnotation> run_annotations(const RunRecord& run);

}  // namespace scalelab
