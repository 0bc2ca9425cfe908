#include "lesson_claim.h"

#include <QStringList>

#include <cmath>
#include <map>
#include <optional>

#include "run_comparison.h"
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

// Whether `a` stands in `relation` to `b` (or to the claim's number), and the values in words.
struct Comparison {
    bool holds = false;
    QString text;
};

Comparison compare(const LessonClaim& claim, double a, double b) {
    const ClaimMetric metric = claim.metric;
    switch (claim.relation) {
        case ClaimRelation::Within: {
            const double gap = (a - b) / std::abs(b);
            return {std::abs(a - b) <= claim.value * std::abs(b),
                    QStringLiteral("%1 against %2: %3 (at most ±%4%)")
                        .arg(value_text(metric, a), value_text(metric, b), percent_text(gap))
                        .arg(claim.value * 100.0, 0, 'g', 3)};
        }
        case ClaimRelation::BetterThan: {
            const double margin = lower_is_better(metric) ? b - a : a - b;
            return {
                margin >= claim.value,
                QStringLiteral("%1 against %2: %3 by %4 (at least %5)")
                    .arg(value_text(metric, a), value_text(metric, b),
                         margin >= 0 ? QStringLiteral("better") : QStringLiteral("worse"),
                         value_text(metric, std::abs(margin)), value_text(metric, claim.value))};
        }
        case ClaimRelation::AtLeast:
            return {a >= claim.value,
                    QStringLiteral("%1 (at least %2)")
                        .arg(value_text(metric, a), value_text(metric, claim.value))};
        case ClaimRelation::AtMost:
            return {a <= claim.value,
                    QStringLiteral("%1 (at most %2)")
                        .arg(value_text(metric, a), value_text(metric, claim.value))};
        case ClaimRelation::RisesOver:
            break;
    }
    return {};
}

ClaimVerdict verdict(bool holds, const QString& text) {
    return {holds ? ClaimOutcome::Held : ClaimOutcome::Failed, text};
}

// RisesOver on one value per named run.
Comparison rise(const LessonClaim& claim, const std::vector<double>& values,
                const std::vector<const RunRecord*>& named) {
    QStringList texts;
    QString fall;
    for (std::size_t i = 0; i < values.size(); ++i) {
        texts.append(value_text(claim.metric, values[i]));
        if (i > 0 && fall.isEmpty() && values[i] < values[i - 1] * (1.0 - claim.value))
            fall = QStringLiteral("; falls %1 to “%2” (at most %3%)")
                       .arg(percent_text(values[i] / values[i - 1] - 1.0), named[i]->name)
                       .arg(claim.value * 100.0, 0, 'g', 3);
    }
    if (fall.isEmpty() && !(values.back() > values.front()))
        fall = QStringLiteral("; the last is not above the first");
    return {fall.isEmpty(), texts.join(QStringLiteral(" → ")) + fall};
}

// The claim on one value per named run, in claim.runs order.
Comparison judge(const LessonClaim& claim, const std::vector<double>& values,
                 const std::vector<const RunRecord*>& named) {
    if (claim.relation == ClaimRelation::RisesOver)
        return rise(claim, values, named);
    return compare(claim, values[0], values.size() > 1 ? values[1] : 0.0);
}

// An epoch_* claim: it must hold at each epoch in its range that every named run reached.
ClaimVerdict every_epoch(const LessonClaim& claim, const std::vector<const RunRecord*>& named) {
    std::vector<std::map<int, double>> by_run;
    for (const RunRecord* run : named)
        by_run.push_back(epoch_values(claim.metric, *run));
    int compared = 0, last = 0;
    QString last_text;
    for (const auto& [epoch, first_value] : by_run.front()) {
        if (epoch < claim.from_epoch || (claim.to_epoch > 0 && epoch > claim.to_epoch))
            continue;
        std::vector<double> values;
        for (const std::map<int, double>& run_values : by_run)
            if (const auto it = run_values.find(epoch); it != run_values.end())
                values.push_back(it->second);
        if (values.size() < by_run.size())
            continue;
        const Comparison comparison = judge(claim, values, named);
        if (!comparison.holds)
            return verdict(false, QStringLiteral("epoch %1: %2").arg(epoch).arg(comparison.text));
        ++compared;
        last = epoch;
        last_text = comparison.text;
    }
    if (compared == 0)
        return verdict(false,
                       QStringLiteral("no epoch from %1 on to compare").arg(claim.from_epoch));
    const QString epochs = compared == 1 ? QStringLiteral("at epoch %1").arg(last)
                                         : QStringLiteral("at each of epochs %1-%2; at epoch %2")
                                               .arg(claim.from_epoch)
                                               .arg(last);
    return verdict(true, QStringLiteral("%1: %2").arg(epochs, last_text));
}

// For a throughput claim, the runs it measured that other programs disturbed (RunRecord::
// disturbed()), and the 1-device run an efficiency was measured against: "; other programs used
// 45% of the cores during “2 devices”: its images/s are not the engine's alone".
QString disturbance_text(const LessonClaim& claim, const RunCollection& runs,
                         const std::vector<const RunRecord*>& named) {
    if (claim.metric != ClaimMetric::ImagesPerSecond &&
        claim.metric != ClaimMetric::ScalingEfficiency)
        return {};
    std::vector<const RunRecord*> measured = named;
    if (claim.metric == ClaimMetric::ScalingEfficiency)
        for (const RunRecord* run : named)
            if (const auto efficiency = scaling_efficiency(runs, run->id);
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

}  // namespace

ClaimVerdict evaluate_claim(const LessonClaim& claim, const RunCollection& runs,
                            const std::vector<int>& run_ids) {
    std::vector<const RunRecord*> named;
    for (int index : claim.runs) {
        const RunRecord* run =
            index < int(run_ids.size()) ? runs.find(run_ids[std::size_t(index)]) : nullptr;
        if (run == nullptr || is_active(run->state))
            return {ClaimOutcome::Pending, QStringLiteral("waiting for the runs")};
        named.push_back(run);
    }
    for (const RunRecord* run : named) {
        if (const std::optional<QString> why = unusable(*run))
            return verdict(false, *why);
        if (per_epoch(claim.metric))
            continue;
        const std::optional<double> value = run_value(claim.metric, runs, *run);
        if (!value || !std::isfinite(*value))
            return verdict(
                false, QStringLiteral("“%1” has no %2%3")
                           .arg(run->name, QString::fromUtf8(to_string(claim.metric)),
                                run->state == RunState::Diverged ? QStringLiteral(": it diverged")
                                                                 : QString()));
    }
    if (per_epoch(claim.metric))
        return every_epoch(claim, named);
    std::vector<double> values;
    for (const RunRecord* run : named)
        values.push_back(*run_value(claim.metric, runs, *run));
    const Comparison comparison = judge(claim, values, named);
    return verdict(comparison.holds, comparison.text + disturbance_text(claim, runs, named));
}

}  // namespace scalelab
