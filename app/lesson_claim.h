#pragma once

#include <QString>

#include <vector>

#include "name_table.h"
#include "run_collection.h"

namespace scalelab {

// What a lesson claim measures on a run. The final_* and best_* figures are one number per run;
// the epoch_* ones are the run's value at every epoch, and the claim must hold at each epoch
// from LessonClaim::from_epoch to LessonClaim::to_epoch that both runs reached.
enum class ClaimMetric {
    FinalTrainLoss,
    FinalTrainAccuracy,
    BestValAccuracy,
    FinalValAccuracy,
    ImagesPerSecond,    // RunRecord::mean_images_per_s()
    ScalingEfficiency,  // scaling_efficiency(): against the latest shown 1-device twin
    EpochTrainLoss,
    EpochTrainAccuracy,
    EpochValAccuracy,
    // The gradient noise scale B_simple (its running average) at the end of the run, and at the
    // end of each epoch.
    FinalNoiseScale,
    EpochNoiseScale,
};
template <>
struct EnumNames<ClaimMetric> {
    static constexpr NameTable<ClaimMetric, 11> table{
        {{{ClaimMetric::FinalTrainLoss, "final_train_loss"},
          {ClaimMetric::FinalTrainAccuracy, "final_train_accuracy"},
          {ClaimMetric::BestValAccuracy, "best_val_accuracy"},
          {ClaimMetric::FinalValAccuracy, "final_val_accuracy"},
          {ClaimMetric::ImagesPerSecond, "images_per_s"},
          {ClaimMetric::ScalingEfficiency, "scaling_efficiency"},
          {ClaimMetric::EpochTrainLoss, "epoch_train_loss"},
          {ClaimMetric::EpochTrainAccuracy, "epoch_train_accuracy"},
          {ClaimMetric::EpochValAccuracy, "epoch_val_accuracy"},
          {ClaimMetric::FinalNoiseScale, "final_noise_scale"},
          {ClaimMetric::EpochNoiseScale, "epoch_noise_scale"}}}};
};

// How a claim relates the measured values, m(run) for each run it names:
//   Within     |m(A) - m(B)| <= value × |m(B)|           ("within": 0.1, "of": "B")
//   BetterThan m(A) better than m(B) by at least value   ("better_than": "B", "by": 0.02);
//              lower is better for losses, higher for the rest
//   AtLeast    m(A) >= value                              ("at_least": 0.7)
//   AtMost     m(A) <= value                              ("at_most": 0.5)
//   RisesOver  m(runs[i+1]) >= m(runs[i]) × (1 - value) for every i, and the last above the
//              first                                      ("rises_over": [...], "tolerance": 0.1)
enum class ClaimRelation { Within, BetterThan, AtLeast, AtMost, RisesOver };

// One claim a lesson makes about its own runs' results, checked when they end.
struct LessonClaim {
    QString text;  // the claim in words, as the lesson panel shows it
    ClaimMetric metric = ClaimMetric::FinalTrainLoss;
    ClaimRelation relation = ClaimRelation::Within;
    // Indices into Lesson::runs: A then B for Within and BetterThan, A for AtLeast and AtMost,
    // the ordered list for RisesOver.
    std::vector<int> runs;
    double value = 0;    // the relation's number (see ClaimRelation)
    int from_epoch = 1;  // epoch_* metrics: the first epoch compared
    int to_epoch = 0;    // epoch_* metrics: the last epoch compared; 0: the run's last
};

enum class ClaimOutcome { Pending, Held, Failed };
template <>
struct EnumNames<ClaimOutcome> {
    static constexpr NameTable<ClaimOutcome, 3> table{{{{ClaimOutcome::Pending, "pending"},
                                                        {ClaimOutcome::Held, "held"},
                                                        {ClaimOutcome::Failed, "failed"}}}};
};

// The outcome with the measured values, e.g. "0.245 against 0.207 (+18%, more than 10%)".
struct ClaimVerdict {
    ClaimOutcome outcome = ClaimOutcome::Pending;
    QString text;
};

// Checks `claim` on the lesson's runs: `run_ids[i]` is the id in `runs` of lesson run i (0 when
// it was not started). Pending while a run it names is queued or running; Failed, saying why,
// when a run it names did not end well (failed, cancelled, diverged where the metric needs a
// finite value) or lacks the metric; otherwise Held or Failed with the values. A throughput
// claim's text names any run it measured that other programs disturbed.
ClaimVerdict evaluate_claim(const LessonClaim& claim, const RunCollection& runs,
                            const std::vector<int>& run_ids);

}  // namespace scalelab
