#include "run_annotations.h"

#include <QCoreApplication>
#include <QStringList>

#include <cmath>

namespace scalelab {

namespace {

QString tr(const char* text) {
    return QCoreApplication::translate("scalelab::RunAnnotations", text);
}

// Learning rates and losses with up to three significant digits: 3.2, 0.05, 2.31.
QString three_digit_text(double value) {
    return QString::number(value, 'g', 3);
}

// Whole seconds, but a tenth of a second under ten: 41 s, 4.2 s.
QString seconds_text(double seconds) {
    return seconds < 10 ? QStringLiteral("%1 s").arg(seconds, 0, 'f', 1)
                        : QStringLiteral("%1 s").arg(std::llround(seconds));
}

// "NaN" whatever its sign bit, "inf", 2.31.
QString loss_text(double loss) {
    return std::isnan(loss) ? QStringLiteral("NaN") : three_digit_text(loss);
}

// "1 device", "8 devices".
QString count_text(int count, const QString& one, const QString& many) {
    return QStringLiteral("%1 %2").arg(count).arg(count == 1 ? one : many);
}

// The last point of `curve` with a finite value.
std::optional<MetricPoint> last_finite(const std::vector<MetricPoint>& curve) {
    for (auto it = curve.rbegin(); it != curve.rend(); ++it)
        if (std::isfinite(it->value))
            return *it;
    return std::nullopt;
}

// The point of `curve` at `step`.
std::optional<MetricPoint> point_at_step(const std::vector<MetricPoint>& curve, std::int64_t step) {
    for (auto it = curve.rbegin(); it != curve.rend(); ++it)
        if (it->step == step)
            return *it;
    return std::nullopt;
}

std::optional<MetricPoint> point_at_epoch(const std::vector<MetricPoint>& curve, int epoch) {
    for (const MetricPoint& point : curve)
        if (point.epoch == epoch)
            return point;
    return std::nullopt;
}

// "no warm-up", or whether the step came during warm-up or after it.
QString warmup_text(const RunRecord& run, std::int64_t step) {
    if (run.spec.warmup_length <= 0)
        return tr("no warm-up");
    const std::optional<double> end = run.warmup_end_step();
    if (!end)
        return tr("with warm-up");
    return double(step) <= *end ? tr("during warm-up") : tr("after warm-up");
}

std::optional<RunAnnotation> divergence(const RunRecord& run) {
    if (run.state != RunState::Diverged)
        return std::nullopt;
    const std::vector<MetricPoint>& loss = run.curve(Metric::TrainLoss);
    QString text = tr("diverged at step %1").arg(run.step);
    if (!loss.empty() && !std::isfinite(loss.back().value))
        text += tr(" (loss %1)").arg(loss_text(loss.back().value));
    QStringList details;
    if (const std::vector<MetricPoint>& lr = run.curve(Metric::LearningRate); !lr.empty())
        details << tr("LR %1").arg(three_digit_text(lr.back().value));
    details << warmup_text(run, run.step);
    text += QStringLiteral(" – ") + details.join(QStringLiteral(", "));
    return RunAnnotation{.text = text, .metric = Metric::TrainLoss, .at = last_finite(loss)};
}

// "0.85", "0.85 and 0.90", "0.80, 0.85 and 0.90".
QString targets_text(const std::vector<double>& targets) {
    QStringList names;
    for (const double target : targets)
        names << QString::number(target, 'f', 2);
    if (names.size() == 1)
        return names.front();
    const QString last = names.takeLast();
    return tr("%1 and %2").arg(names.join(QStringLiteral(", ")), last);
}

// One annotation per epoch: targets first reached at the same evaluation share a point.
std::vector<RunAnnotation> targets_reached(const RunRecord& run) {
    std::vector<RunAnnotation> annotations;
    std::size_t first = 0;
    while (first < run.targets.size()) {
        const TargetReached& reached = run.targets[first];
        std::vector<double> targets;
        std::size_t next = first;
        for (; next < run.targets.size() && run.targets[next].epoch == reached.epoch; ++next)
            targets.push_back(run.targets[next].target);
        annotations.push_back(
            RunAnnotation{.text = tr("reached %1 at epoch %2 (%3)")
                                      .arg(targets_text(targets))
                                      .arg(reached.epoch)
                                      .arg(seconds_text(reached.seconds)),
                          .metric = Metric::ValAccuracy,
                          .at = point_at_epoch(run.curve(Metric::ValAccuracy), reached.epoch)});
        first = next;
    }
    return annotations;
}

std::optional<RunAnnotation> stall(const RunRecord& run) {
    if (run.state == RunState::Diverged || int(run.epochs.size()) < stalled_after_epochs)
        return std::nullopt;
    const EpochMetrics& first = run.epochs.front();
    const EpochMetrics& last = run.epochs.back();
    // A loss of 0 cannot fall any further, and one that is not finite diverged.
    const bool measured =
        first.train_loss > 0 && std::isfinite(first.train_loss) && std::isfinite(last.train_loss);
    if (!measured || last.train_loss < first.train_loss)
        return std::nullopt;
    return RunAnnotation{
        .text = tr("stalled: training loss %1 at epoch %2, not below %3 at epoch %4")
                    .arg(three_digit_text(last.train_loss))
                    .arg(last.epoch)
                    .arg(three_digit_text(first.train_loss))
                    .arg(first.epoch),
        .metric = Metric::TrainLoss,
        .at = point_at_step(run.curve(Metric::TrainLoss), last.step)};
}

std::optional<RunAnnotation> scaled_lr_without_warmup(const RunRecord& run) {
    if (run.state == RunState::Diverged || run.spec.warmup_length > 0)
        return std::nullopt;
    const double lr = effective_lr(run.spec);
    if (!(lr > run.spec.lr))
        return std::nullopt;
    const long long global_batch =
        static_cast<long long>(run.spec.devices) * run.spec.batch * run.spec.accumulation;
    return RunAnnotation{.text = tr("no warm-up for LR %1, scaled up for global batch %2")
                                     .arg(three_digit_text(lr))
                                     .arg(global_batch),
                         .metric = Metric::LearningRate,
                         .at = std::nullopt};
}

std::optional<RunAnnotation> oversubscription(const RunRecord& run) {
    const RunInfo& info = run.info;
    if (!run.started || info.devices * info.threads_per_device <= info.cores)
        return std::nullopt;
    const QString devices = count_text(info.devices, tr("device"), tr("devices"));
    const QString cores = count_text(info.cores, tr("core"), tr("cores"));
    const QString workers =
        info.threads_per_device == 1
            ? devices
            : tr("%1 × %2").arg(devices,
                                count_text(info.threads_per_device, tr("thread"), tr("threads")));
    return RunAnnotation{.text = tr("%1 on %2: throughput cannot scale").arg(workers, cores),
                         .metric = Metric::ImagesPerSecond,
                         .at = std::nullopt};
}

std::optional<RunAnnotation> disturbance(const RunRecord& run) {
    if (!run.disturbed())
        return std::nullopt;
    return RunAnnotation{
        .text = tr("other programs used %1% of the cores during this run: its images/s may be "
                   "low")
                    .arg(std::lround(*run.other_programs_share() * 100.0)),
        .metric = Metric::ImagesPerSecond,
        .at = std::nullopt};
}

}  // namespace

std::vector<RunAnnotation> run_annotations(const RunRecord& run) {
    std::vector<RunAnnotation> annotations;
    for (std::optional<RunAnnotation> (*rule)(const RunRecord&) :
         {divergence, stall, scaled_lr_without_warmup, oversubscription, disturbance})
        if (std::optional<RunAnnotation> annotation = rule(run))
            annotations.push_back(std::move(*annotation));
    for (RunAnnotation& reached : targets_reached(run))
        annotations.push_back(std::move(reached));
    return annotations;
}

}  // namespace scalelab
