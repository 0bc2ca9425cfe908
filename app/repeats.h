#pragma once

#include <QString>

#include <cstdint>
#include <vector>

#include "train/run_spec.h"

namespace scalelab {

// Launching repeats (run_group.h): the checks and the runs that --repeats, the form's Repeats
// field and "repeats" in experiment and lesson files share, so that all of them refuse the same
// numbers with the same words.

// What is wrong with `repeats` runs from `seed` on, said of `what` ("--repeats", "Repeats",
// "\"repeats\""): "--repeats must be a whole number from 1 to 64, got 0", or seeds that would
// pass the largest seed. Empty when they can be launched.
QString repeats_problem(const QString& what, long long repeats, std::uint64_t seed = 0);

// `spec` over seeds spec.seed .. spec.seed + repeats - 1, in that order; one copy of it when
// repeats is 1. repeats_problem() must be empty.
std::vector<RunSpec> repeat_specs(const RunSpec& spec, int repeats);

// A new group id (RunRecord::group): a UUID, so that groups made by different processes and
// stores never meet on import.
QString new_group_id();

// The name of one of `repeats` runs of `name`: "NAME (seed S)", or `name` itself for a single
// run; shared_name (run_group.h) takes the seed back off to name the group.
QString repeat_name(const QString& name, std::uint64_t seed, int repeats);

}  // namespace scalelab
