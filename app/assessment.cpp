#include "assessment.h"

#include <QStringList>

#include <algorithm>

namespace scalelab {

namespace {

QString accuracy_text(double accuracy) {
    return QString::number(accuracy, 'f', 3);
}

QString whole_seconds_text(double seconds) {
    return QString::number(seconds, 'f', 0);
}

// "0.861, 0.872 at epochs 3-4" (or "0.861 at epoch 3").
QString streak_text(const std::vector<MetricPoint>& points, std::size_t first, std::size_t last) {
    QStringList values;
    for (std::size_t i = first; i <= last; ++i)
        values.append(accuracy_text(points[i].value));
    const QString epochs =
        first == last
            ? QStringLiteral("epoch %1").arg(points[first].epoch)
            : QStringLiteral("epochs %1-%2").arg(points[first].epoch).arg(points[last].epoch);
    return values.join(QStringLiteral(", ")) + QStringLiteral(" at ") + epochs;
}

}  // namespace

AssessmentVerdict assess(const Assessment& assessment, const RunRecord& run) {
    const std::vector<MetricPoint>& points = run.curve(Metric::ValAccuracy);
    const std::size_t needed = std::size_t(std::max(1, assessment.consecutive_epochs));
    const QString budget = whole_seconds_text(assessment.time_budget_s);

    // The first streak long enough is the earliest the run could pass.
    std::size_t streak = 0;
    for (std::size_t i = 0; i < points.size(); ++i) {
        streak = points[i].value >= assessment.target ? streak + 1 : 0;
        if (streak < needed)
            continue;
        const QString held = streak_text(points, i + 1 - needed, i);
        if (points[i].seconds <= assessment.time_budget_s)
            return {AssessmentOutcome::Passed,
                    QStringLiteral("passed: %1, reached after %2 s of the %3 s budget")
                        .arg(held, whole_seconds_text(points[i].seconds), budget)};
        return {AssessmentOutcome::Failed,
                QStringLiteral("failed: %1 came after %2 s, over the %3 s budget")
                    .arg(held, whole_seconds_text(points[i].seconds), budget)};
    }

    std::optional<double> best;
    for (const MetricPoint& point : points)
        if (point.seconds <= assessment.time_budget_s)
            best = std::max(best.value_or(point.value), point.value);
    const QString best_text = best ? QStringLiteral("best %1").arg(accuracy_text(*best))
                                   : QStringLiteral("no evaluation");
    const double seconds = std::min(run.train_seconds, assessment.time_budget_s);

    if (is_active(run.state) && run.train_seconds <= assessment.time_budget_s)
        return {AssessmentOutcome::Pending,
                QStringLiteral("pending: %1 so far, after %2 s of the %3 s budget")
                    .arg(best_text, whole_seconds_text(run.train_seconds), budget)};
    const QString below = QStringLiteral("below %1 for %2 epoch%3 in a row")
                              .arg(accuracy_text(assessment.target))
                              .arg(needed)
                              .arg(needed == 1 ? "" : "s");
    if (run.state == RunState::Finished || run.state == RunState::ReachedTarget ||
        is_active(run.state))
        return {AssessmentOutcome::Failed, QStringLiteral("failed: %1 in %2 s, %3")
                                               .arg(best_text, whole_seconds_text(seconds), below)};
    const std::string_view state = to_string(run.state);
    return {AssessmentOutcome::Failed,
            QStringLiteral("failed: the run %1 after %2 s; %3")
                .arg(QString::fromUtf8(state.data(), qsizetype(state.size())),
                     whole_seconds_text(run.train_seconds), best_text)};
}

}  // namespace scalelab
