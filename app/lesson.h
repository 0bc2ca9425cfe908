#pragma once

#include <QByteArray>
#include <QString>

#include <optional>
#include <stdexcept>
#include <vector>

#include "assessment.h"
#include "backend/device_inventory.h"
#include "lesson_claim.h"
#include "train/run_spec.h"

namespace scalelab {

// The charts a lesson shows beside its explanation. In files: "train_loss", "val_accuracy",
// "images_per_s", "learning_rate", "noise_scale", "scaling", "steps_to_target",
// "time_breakdown".
enum class LessonChart {
    TrainLoss,
    ValAccuracy,
    ImagesPerSecond,
    LearningRate,
    NoiseScale,
    Scaling,
    StepsToTarget,
    TimeBreakdown
};
// What the lesson's curves are drawn against. In files: "step", "epoch", "samples", "time".
enum class LessonAxis { Step, Epoch, Samples, Time };

struct LessonRun {
    QString name;  // unique within the lesson, as the charts' legends show it
    RunSpec spec;
    // Runs over seeds spec.seed .. spec.seed + repeats - 1, one group (run_group.h), whose
    // mean the lesson's claims compare.
    int repeats = 1;
};

// A classroom lesson: runs to train one after another, the charts and x axis to watch them on,
// and a short explanation of what to look for.
//
// The file (resources/lessons/*.json, or the user's own) is a JSON object:
//   "title", "explanation": strings;
//   "charts": the chart names above; "x_axis": an axis name (default "step");
//   "base": RunSpec fields (run_spec_json.h) shared by every run;
//   "runs": a non-empty array of objects, each a "name" and RunSpec fields overriding base;
//   "repeats" (in base or a run, the run's overriding base's; default 1): how many seeds each
//          run trains over, checked with repeats_problem() (repeats.h);
//   "gpu": {"base": fields overriding base, "assessment": {...}}, the larger setting used where
//          GPUs are present and its dataset is found (optional);
//   "assessment": {"target", "consecutive_epochs", "time_budget_s"} (optional). It sets every
//          run's target_accuracy and patience, so the runs stop once they pass; a file with
//          an assessment must not set those two itself;
//   "expect": the lesson's claims about its runs' results (optional), each an object
//          {"claim": "in words", "metric": a ClaimMetric name, "run": a run's name, and one
//          relation: "within": r, "of": run | "better_than": run, "by": d (default 0) |
//          "at_least": x | "at_most": x; or, instead of "run", "rises_over": [run, ...],
//          "tolerance": r (default 0); "from_epoch", "to_epoch": the epochs compared for
//          the epoch_* metrics (default: all)}
//          (lesson_claim.h).
struct Lesson {
    QString file;
    QString title;
    QString explanation;
    std::vector<LessonChart> charts;
    LessonAxis x_axis = LessonAxis::Step;
    std::vector<LessonRun> runs;
    std::optional<Assessment> assessment;
    std::vector<LessonClaim> claims;
    // For a file with a "gpu" block, which setting was chosen and why, for the user: "GPU
    // setting: cifar10, wrn, 4 devices" or "laptop setting: fashion-mnist (first 20000 training
    // images), cnn, 2 CPU devices; no GPU: ...". Empty for a file without one.
    QString setting_note;
};

// Test: every run on synthetic data (256 training and 128 test images), at most 2 epochs
// (warm-ups in epochs shortened in proportion) and at most 2 repeats (still a group, with a
// spread, but half the time of 3 or more), otherwise the same runs; for tests.
enum class LessonSize { Full, Test };

// Every problem of a lesson file, one per line, each "FILE:LINE: field 'runs[2].lr': what is
// wrong and what to do" (the field path: "title", "base.model", "runs[0].batch", ...).
class LessonError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Reads a lesson. `file` names it in messages and in Lesson::file. `devices` decides whether
// the "gpu" block applies. Every run's spec is checked with RunSpec::validate(); a key that is
// not part of the format (at any level), a value of the wrong type, an unknown chart, axis,
// model or optimizer, a run without a name and an empty run list throw LessonError.
Lesson parse_lesson(const QByteArray& json, const QString& file, const DeviceInventory& devices,
                    LessonSize size = LessonSize::Full);

}  // namespace scalelab
