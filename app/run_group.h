#pragma once

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "run_record.h"
#include "train/run_spec.h"

namespace scalelab {

// Repeats: the same experiment run over seeds seed .. seed + N - 1 (--repeats N, the form's
// Repeats, "repeats" in experiment and lesson files), its runs one group (RunRecord::group).
// What a group shows is what its members' spread allows a reader to conclude.

// The most repeats one launch makes: a larger number is refused with the range, never clamped.
inline constexpr int most_repeats = 64;

// Why `specs` cannot be one group: "field 'batch' differs between runs (128 against 256); a
// group's runs differ only in their seed". Empty when they differ in nothing but the seed.
QString group_problem(const std::vector<RunSpec>& specs);

// Mean and sample standard deviation (n - 1; 0 for one value) of some numbers, with their range.
struct Spread {
    int count = 0;
    double mean = 0;
    double stddev = 0;
    double min = 0;
    double max = 0;
};

// The spread of `values`; nothing when there are none.
std::optional<Spread> spread_of(const std::vector<double>& values);

// A group as the run table, `scalelab-cli runs list` and the charts show it: how its members
// ended, and the spread of their summary figures over the members that have each figure.
struct GroupSummary {
    QString group;
    std::vector<int> run_ids;  // in RunCollection order
    int finished = 0;          // finished or reached the target
    int active = 0;            // queued or running
    int stopped = 0;           // cancelled, failed or interrupted
    int diverged = 0;
    std::optional<Spread> best_val_accuracy;
    // Times and steps to `target`: the lowest target any member's time_to_target() is to, so
    // that every member that reached a target is timed to the same one (0 when none reached any).
    double target = 0;
    std::optional<Spread> time_to_target_s;
    std::optional<Spread> steps_to_target;
    std::optional<Spread> images_per_s;
};

// The summary of the runs `members` (one group's).
GroupSummary group_summary(const QString& group, const std::vector<const RunRecord*>& members);

// What `names` share, for a group's name: their longest common beginning cut back to a whole
// word, less what trails it (separators, an open bracket, a last word "seed"); the first name
// where they share no word ("alpha", "beta").
QString shared_name(const QStringList& names);

// The name a group's row goes by: what its members' names share, cut to whole words ("lars
// wide" for "lars wide (seed 1)", "lars wide (seed 2)"), or the first member's name when they share
// nothing; then its seeds ("lars wide · seeds 1–5").
QString group_label(const std::vector<const RunRecord*>& members);

// "5 runs: 4 finished, 1 diverged": how many runs and how each ended, every member counted.
QString group_ended_text(const GroupSummary& summary);

// "0.897 ± 0.003" (mean ± sample standard deviation to `decimals` places, then `unit`), and
// " (4 of 5)" after it when only some of a group's `members` runs have the figure.
QString spread_text(const Spread& spread, int decimals, std::size_t members,
                    const QString& unit = {});

// Welch's t-test (unequal variances) of two groups' means, two-sided: t, the Welch-Satterthwaite
// degrees of freedom and the p-value. Nothing when either group has fewer than 2 values or both
// have no spread.
struct WelchTest {
    double t = 0;
    double degrees_of_freedom = 0;
    double p = 1;
};
std::optional<WelchTest> welch_test(const Spread& a, const Spread& b);

// The significance level the Notes column and the docs use (docs/repeats.md).
inline constexpr double noise_level = 0.05;

// "within seed noise: 0.897 ± 0.003 against 0.899 ± 0.002 (Welch's t-test, p = 0.41)" when the
// two groups' means of `what` do not differ at noise_level; empty when they do, or when the test
// does not apply.
QString noise_note(const QString& what, const Spread& mine, const Spread& other, int decimals);

// The group `mine` is compared with (docs/repeats.md): the baseline run's group when the baseline
// is in another group; otherwise the other group with the highest mean best validation accuracy.
// Null when there is no other group with a best validation accuracy.
const GroupSummary* reference_group(const GroupSummary& mine, const std::vector<GroupSummary>& all,
                                    const QString& baseline_group);

// The Notes of group `mine` against `other`: a noise_note() for the best validation accuracy,
// and for the time to target when both are timed to the same target.
QStringList noise_notes(const GroupSummary& mine, const GroupSummary& other);

}  // namespace scalelab
