#pragma once

#include <QString>

#include "run_record.h"

namespace scalelab {

// The course's pass criterion: validation accuracy at or above `target` in
// `consecutive_epochs` evaluations in a row, the last of them within `time_budget_s` seconds of
// training (evaluation time excluded, as MetricPoint::seconds counts it).
struct Assessment {
    double target = 0;
    int consecutive_epochs = 2;
    double time_budget_s = 0;
};

enum class AssessmentOutcome { Pending, Passed, Failed };

// What the app shows beside an assessed run: the outcome and a sentence with the figures, e.g.
// "passed: 0.861, 0.872 at epochs 3-4, reached after 74 s of the 120 s budget".
struct AssessmentVerdict {
    AssessmentOutcome outcome = AssessmentOutcome::Pending;
    QString text;
};

// Judges `run` from its validation-accuracy curve and state. Pending while the run is queued or
// running and can still pass; Failed as soon as it cannot (its training time is over the budget
// without a passing streak), or once it ended without one.
AssessmentVerdict assess(const Assessment& assessment, const RunRecord& run);

}  // namespace scalelab
