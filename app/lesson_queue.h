#pragma once

#include <QString>

#include <cstdint>
#include <optional>
#include <vector>

#include "lesson.h"

namespace scalelab {

class RunCollection;

// Queues the lesson's runs one after another, as `scalelab-cli lesson run` and the window's Run
// lesson both do: each lesson run `repeats` times over seeds seed .. seed + repeats - 1, those
// runs one new group (RunRecord::group) when repeats > 1, each run named `prefix` +
// lesson_member_name(). `seed`, when
// given, replaces every lesson run's first seed (--seed); repeats_problem() must accept it.
// Fewer ids than runs when the store could not create one (RunCollection::storeError says why).
LessonRunIds queue_lesson(RunCollection& runs, const Lesson& lesson, const QString& prefix = {},
                          std::optional<std::uint64_t> seed = std::nullopt);

// A lesson run's run as the lesson names it: the lesson run's name, "NAME (seed S)" for a member
// of its repeats, as `train --repeats` names them.
QString lesson_member_name(const LessonRun& run, std::uint64_t seed);

// All the ids of `ids`, lesson run by lesson run.
std::vector<int> all_runs(const LessonRunIds& ids);

}  // namespace scalelab
