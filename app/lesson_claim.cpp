#include "lesson_claim.h"

#include <QStringList>

#include <cmath>
#include <map>
#include <optional>

#include "run_comparison.h"
#include "run_group.h"
#include "run_summary.h"

namespace scalelab {

namespace {

bool lower_is_better(ClaimMetric metric) {
    return metric == ClaimMetric::FinalTrainLoss || metric == ClaimMetric::EpochTrainLoss;
}

bool per_epoch(ClaimMetric metric) {
    return metric == ClaimMetric::EpochTrainLoss || metric == ClaimMetric::EpochTrainAccuracy ||
           metric == ClaimMetric::EpochValAccuracy || metric == ClaimMetric::EpochNoiseScale;
}

// The noise scale's last known value in each epoch (it is NaN until it can be estimated).
std::map<int, double> noise_scale_by_epoch(const RunRecord& run) {
    std::map<int, double> values;
    for (const MetricPoint& point : run.curve(Metric::NoiseScale))
        if (std::isfinite(point.value))
            values[point.epoch] = point.value;
    return values;
}

QString value_text(ClaimMetric metric, double value) {
    if (metric == ClaimMetric::ImagesPerSecond)
        return whole_number_text(value);
    if (metric == ClaimMetric::ScalingEfficiency)
        return QStringLiteral("%1%").arg(value * 100.0, 0, 'f', 0);
    return QString::number(value, 'f', std::abs(value) < 10 ? 3 : 1);
}

QString percent_text(double fraction) {
    return QStringLiteral("%1%2%")
        .arg(fraction < 0 ? QStringLiteral("−") : QStringLiteral("+"))
        .arg(std::abs(fraction) * 100.0, 0, 'f', 1);
}

// The value of a one-number metric, or nothing when the run has none (yet).
std::optional<double> run_value(ClaimMetric metric, const RunCollection& runs,
                                const RunRecord& run) {
    switch (metric) {
        case ClaimMetric::FinalTrainLoss:
            return run.epochs.empty() ? std::nullopt
                                      : std::optional<double>(run.epochs.back().train_loss);
        case ClaimMetric::FinalTrainAccuracy:
            return run.epochs.empty() ? std::nullopt
                                      : std::optional<double>(run.epochs.back().train_accuracy);
        case ClaimMetric::BestValAccuracy:
            return run.best_val_accuracy();
        case ClaimMetric::FinalValAccuracy:
            return run.epochs.empty() ? std::nullopt
                                      : std::optional<double>(run.epochs.back().val_accuracy);
        case ClaimMetric::ImagesPerSecond:
            return run.mean_images_per_s();
        case ClaimMetric::ScalingEfficiency: {
            const std::optional<ScalingEfficiency> efficiency = scaling_efficiency(runs, run.id);
            return efficiency ? efficiency->value : std::nullopt;
        }
        case ClaimMetric::FinalNoiseScale: {
            const std::map<int, double> values = noise_scale_by_epoch(run);
            return values.empty() ? std::nullopt : std::optional<double>(values.rbegin()->second);
        }
        case ClaimMetric::EpochTrainLoss:
        case ClaimMetric::EpochTrainAccuracy:
        case ClaimMetric::EpochValAccuracy:
        case ClaimMetric::EpochNoiseScale:
            break;
    }
    return std::nullopt;
}

// Epoch number to value, for the epoch_* metrics.
std::map<int, double> epoch_values(ClaimMetric metric, const RunRecord& run) {
    if (metric == ClaimMetric::EpochNoiseScale)
        return noise_scale_by_epoch(run);
    std::map<int, double> values;
    for (const EpochMetrics& epoch : run.epochs)
        values[epoch.epoch] = metric == ClaimMetric::EpochTrainLoss       ? epoch.train_loss
                              : metric == ClaimMetric::EpochTrainAccuracy ? epoch.train_accuracy
                                                                          : epoch.val_accuracy;
    return values;
}

// A lesson run as a claim measures it: its members (its one run, or its repeats), and the name
// texts give it.
struct Measured {
    QString name;  // the run's own, or its group's label ("batch 16 · seeds 0–2")
    std::vector<const RunRecord*> members;
};

// "0.245", or "0.245 ± 0.004" (mean ± standard deviation) for several members.
QString claim_value_text(ClaimMetric metric, const Spread& value) {
    if (value.count < 2)
        return value_text(metric, value.mean);
    return QStringLiteral("%1 ± %2").arg(value_text(metric, value.mean),
                                         value_text(metric, value.stddev));
}

// Whether the values stand in the claim's relation, and the values in words.
struct Comparison {
    bool holds = false;
    QString text;
};

// A comparison and, when it holds but the difference claimed is within seed noise,
// noise_note()'s words for that.
struct Judged {
    Comparison comparison;
    QString noise;
};

Comparison compare(const LessonClaim& claim, const Spread& a, const Spread& b) {
    const ClaimMetric metric = claim.metric;
    const QString values = QStringLiteral("%1 against %2")
                               .arg(claim_value_text(metric, a), claim_value_text(metric, b));
    switch (claim.relation) {
        case ClaimRelation::Within: {
            const double gap = (a.mean - b.mean) / std::abs(b.mean);
            return {std::abs(a.mean - b.mean) <= claim.value * std::abs(b.mean),
                    QStringLiteral("%1: %2 (at most ±%3%)")
                        .arg(values, percent_text(gap))
                        .arg(claim.value * 100.0, 0, 'g', 3)};
        }
        case ClaimRelation::BetterThan: {
            const double margin = lower_is_better(metric) ? b.mean - a.mean : a.mean - b.mean;
            return {
                margin >= claim.value,
                QStringLiteral("%1: %2 by %3 (at least %4)")
                    .arg(values, margin >= 0 ? QStringLiteral("better") : QStringLiteral("worse"),
                         value_text(metric, std::abs(margin)), value_text(metric, claim.value))};
        }
        case ClaimRelation::AtLeast:
            return {a.mean >= claim.value,
                    QStringLiteral("%1 (at least %2)")
                        .arg(claim_value_text(metric, a), value_text(metric, claim.value))};
        case ClaimRelation::AtMost:
            return {a.mean <= claim.value,
                    QStringLiteral("%1 (at most %2)")
                        .arg(claim_value_text(metric, a), value_text(metric, claim.value))};
        case ClaimRelation::RisesOver:
            break;
    }
    return {};
}

// RisesOver on one value per named run.
Comparison rise(const LessonClaim& claim, const std::vector<Spread>& values,
                const std::vector<Measured>& named) {
    QStringList texts;
    QString fall;
    for (std::size_t i = 0; i < values.size(); ++i) {
        texts.append(claim_value_text(claim.metric, values[i]));
        if (i > 0 && fall.isEmpty() && values[i].mean < values[i - 1].mean * (1.0 - claim.value))
            fall = QStringLiteral("; falls %1 to “%2” (at most %3%)")
                       .arg(percent_text(values[i].mean / values[i - 1].mean - 1.0), named[i].name)
                       .arg(claim.value * 100.0, 0, 'g', 3);
    }
    if (fall.isEmpty() && !(values.back().mean > values.front().mean))
        fall = QStringLiteral("; the last is not above the first");
    return {fall.isEmpty(), texts.join(QStringLiteral(" → ")) + fall};
}

// The decimals noise_note() shows a value of `metric` with, as value_text() does.
int decimals(ClaimMetric metric, double value) {
    if (metric == ClaimMetric::ImagesPerSecond)
        return 0;
    if (metric == ClaimMetric::ScalingEfficiency)
        return 2;
    return std::abs(value) < 10 ? 3 : 1;
}

// The claim on one value per named run, in claim.runs order. The difference a better_than
// claim makes, and a rises_over claim's from its first run to its last, must stand out of the
// seed noise where both runs have repeats.
Judged judge(const LessonClaim& claim, const std::vector<Spread>& values,
             const std::vector<Measured>& named) {
    using enum ClaimRelation;
    Judged judged{claim.relation == RisesOver
                      ? rise(claim, values, named)
                      : compare(claim, values[0], values.size() > 1 ? values[1] : Spread{}),
                  {}};
    if (judged.comparison.holds && (claim.relation == BetterThan || claim.relation == RisesOver)) {
        const Spread& mine = claim.relation == BetterThan ? values[0] : values.back();
        const Spread& other = values[claim.relation == BetterThan ? 1 : 0];
        judged.noise = noise_note(QString::fromUtf8(to_string(claim.metric)), mine, other,
                                  decimals(claim.metric, mine.mean));
    }
    return judged;
}

// The verdict of a judgement; `where` ("epoch 3: ") goes before its text.
ClaimVerdict verdict(const Judged& judged, const QString& where = {}) {
    if (!judged.comparison.holds)
        return {ClaimOutcome::Failed, where + judged.comparison.text};
    if (!judged.noise.isEmpty())
        return {ClaimOutcome::WithinNoise,
                QStringLiteral("%1not shown by these runs: %2").arg(where, judged.noise)};
    return {ClaimOutcome::Held, where + judged.comparison.text};
}

// Epoch number to the spread of the members' values, at the epochs every member reached.
std::map<int, Spread> epoch_spreads(ClaimMetric metric,
                                    const std::vector<const RunRecord*>& members) {
    std::map<int, std::vector<double>> by_epoch;
    for (const RunRecord* run : members)
        for (const auto& [epoch, value] : epoch_values(metric, *run))
            by_epoch[epoch].push_back(value);
    std::map<int, Spread> spreads;
    for (const auto& [epoch, values] : by_epoch)
        if (values.size() == members.size())
            spreads[epoch] = *spread_of(values);
    return spreads;
}

// An epoch_* claim: it must hold, out of the seed noise, at each epoch in its range that every
// named run reached.
ClaimVerdict every_epoch(const LessonClaim& claim, const std::vector<Measured>& named) {
    std::vector<std::map<int, Spread>> by_run;
    for (const Measured& run : named)
        by_run.push_back(epoch_spreads(claim.metric, run.members));
    int compared = 0, last = 0;
    QString last_text;
    for (const auto& [epoch, first_value] : by_run.front()) {
        if (epoch < claim.from_epoch || (claim.to_epoch > 0 && epoch > claim.to_epoch))
            continue;
        std::vector<Spread> values;
        for (const std::map<int, Spread>& run_values : by_run)
            if (const auto it = run_values.find(epoch); it != run_values.end())
                values.push_back(it->second);
        if (values.size() < by_run.size())
            continue;
        const Judged judged = judge(claim, values, named);
        if (!judged.comparison.holds || !judged.noise.isEmpty())
            return verdict(judged, QStringLiteral("epoch %1: ").arg(epoch));
        ++compared;
        last = epoch;
        last_text = judged.comparison.text;
    }
    if (compared == 0)
        return {ClaimOutcome::Failed,
                QStringLiteral("no epoch from %1 on to compare").arg(claim.from_epoch)};
    const QString epochs = compared == 1 ? QStringLiteral("at epoch %1").arg(last)
                                         : QStringLiteral("at each of epochs %1-%2; at epoch %2")
                                               .arg(claim.from_epoch)
                                               .arg(last);
    return {ClaimOutcome::Held, QStringLiteral("%1: %2").arg(epochs, last_text)};
}

// For a throughput claim, the runs it measured that other programs disturbed (RunRecord::
// disturbed()), and the 1-device run an efficiency was measured against: "; other programs used
// 45% of the cores during “2 devices”: its images/s are not the engine's alone".
QString disturbance_text(const LessonClaim& claim, const RunCollection& runs,
                         const std::vector<Measured>& named) {
    if (claim.metric != ClaimMetric::ImagesPerSecond &&
        claim.metric != ClaimMetric::ScalingEfficiency)
        return {};
    std::vector<const RunRecord*> measured;
    for (const Measured& run : named)
        measured.insert(measured.end(), run.members.begin(), run.members.end());
    if (claim.metric == ClaimMetric::ScalingEfficiency)
        for (std::size_t i = 0, members = measured.size(); i < members; ++i)
            if (const auto efficiency = scaling_efficiency(runs, measured[i]->id);
                efficiency && efficiency->baseline_id != 0)
                measured.push_back(runs.find(efficiency->baseline_id));
    QString text;
    for (const RunRecord* run : measured)
        if (run->disturbed())
            text += QStringLiteral(
                        "; other programs used %1% of the cores during “%2”: its "
                        "images/s are not the engine's alone")
                        .arg(std::lround(*run->other_programs_share() * 100.0))
                        .arg(run->name);
    return text;
}

// Why a run that ended cannot be judged, or nothing when it can.
std::optional<QString> unusable(const RunRecord& run) {
    switch (run.state) {
        case RunState::Failed:
        case RunState::Cancelled:
        case RunState::Interrupted:
            return QStringLiteral("“%1” did not finish (%2)")
                .arg(run.name, QString::fromUtf8(to_string(run.state)));
        default:
            return std::nullopt;
    }
}

// The lesson runs the claim names, each with all its members; nothing while one was not started
// or a member is queued or running.
std::optional<std::vector<Measured>> named_runs(const LessonClaim& claim, const RunCollection& runs,
                                                const LessonRunIds& run_ids) {
    std::vector<Measured> named;
    for (int index : claim.runs) {
        if (index >= int(run_ids.size()) || run_ids[std::size_t(index)].empty())
            return std::nullopt;
        Measured& run = named.emplace_back();
        for (const int id : run_ids[std::size_t(index)]) {
            const RunRecord* member = runs.find(id);
            if (member == nullptr || is_active(member->state))
                return std::nullopt;
            run.members.push_back(member);
        }
        run.name = run.members.size() == 1 ? run.members.front()->name : group_label(run.members);
    }
    return named;
}

// Why a member cannot give the claim's value (it did not finish, or has no finite value of a
// one-number metric), or nothing when every member can.
std::optional<QString> missing_value(const LessonClaim& claim, const RunCollection& runs,
                                     const RunRecord& run) {
    if (std::optional<QString> why = unusable(run))
        return why;
    if (per_epoch(claim.metric))
        return std::nullopt;
    const std::optional<double> value = run_value(claim.metric, runs, run);
    if (value && std::isfinite(*value))
        return std::nullopt;
    return QStringLiteral("“%1” has no %2%3")
        .arg(run.name, QString::fromUtf8(to_string(claim.metric)),
             run.state == RunState::Diverged ? QStringLiteral(": it diverged") : QString());
}

}  // namespace

ClaimVerdict evaluate_claim(const LessonClaim& claim, const RunCollection& runs,
                            const LessonRunIds& run_ids) {
    const std::optional<std::vector<Measured>> named = named_runs(claim, runs, run_ids);
    if (!named)
        return {ClaimOutcome::Pending, QStringLiteral("waiting for the runs")};
    for (const Measured& run : *named)
        for (const RunRecord* member : run.members)
            if (const std::optional<QString> why = missing_value(claim, runs, *member))
                return {ClaimOutcome::Failed, *why};
    if (per_epoch(claim.metric))
        return every_epoch(claim, *named);
    std::vector<Spread> values;
    for (const Measured& run : *named) {
        std::vector<double> member_values;
        for (const RunRecord* member : run.members)
            member_values.push_back(*run_value(claim.metric, runs, *member));
        values.push_back(*spread_of(member_values));
    }
    Judged judged = judge(claim, values, *named);
    judged.comparison.text += disturbance_text(claim, runs, *named);
    return verdict(judged);
}

}  // namespace scalelab
