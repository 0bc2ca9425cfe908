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

// WithinNoise: the values are as the claim says, but the difference it claims between two
// lesson runs with repeats is within their seed noise (Welch's t-test, run_group.h): these runs
// do not show it, so it is not reported as held.
enum class ClaimOutcome { Pending, Held, Failed, WithinNoise };
template <>
struct EnumNames<ClaimOutcome> {
    static constexpr NameTable<ClaimOutcome, 4> table{
        {{{ClaimOutcome::Pending, "pending"},
          {ClaimOutcome::Held, "held"},
          {ClaimOutcome::Failed, "failed"},
          {ClaimOutcome::WithinNoise, "within_noise"}}}};
};

// The outcome with the measured values, e.g. "0.245 against 0.207 (+18%, more than 10%)".
struct ClaimVerdict {
    ClaimOutcome outcome = ClaimOutcome::Pending;
    QString text;
};

// The runs a lesson queued, by lesson run in lesson order: each lesson run's members, its one
// run or its repeats (one group), in seed order.
using LessonRunIds = std::vector<std::vector<int>>;

// Checks `claim` on the lesson's runs: `run_ids[i]` are the ids in `runs` of lesson run i's
// members (none when it was not started). A lesson run's value is the mean over its members
// (at an epoch every member reached, for the epoch_* metrics), shown "mean ± standard
// deviation" when it has several. Pending while a run it names is queued or running; Failed,
// saying why, when a member did not end well (failed, cancelled, diverged where the metric
// needs a finite value) or lacks the metric; otherwise Held or Failed with the values, or
// WithinNoise ("not shown by these runs: within seed noise: ...") when a better_than or
// rises_over claim (its first against its last run) holds on the means but both runs have
// repeats and Welch's t-test finds their means within noise_level of each other. A throughput
// claim's text names any run it measured that other programs disturbed.
ClaimVerdict evaluate_claim(const LessonClaim& claim, const RunCollection& runs,
                            const LessonRunIds& run_ids);

}  // namespace scalelab
