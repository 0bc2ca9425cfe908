#pragma once

#include <QString>
#include <QStringList>

#include "train/run_spec.h"

namespace scalelab {

// A run's name and tags, however they come (--name and --tag, the run table's editors, an
// imported file): one rule for each, so that every way into the run store takes the same.
inline constexpr qsizetype longest_run_name = 200;
inline constexpr qsizetype longest_tag = 64;
inline constexpr qsizetype most_tags = 32;

// Why `name` cannot name a run, as advice ("a run name has at most 200 characters, this one has
// 10485760: shorten it"); empty when it can. An empty name is left to the caller (the store
// names such a run "run <id>").
QString run_name_problem(const QString& name);

// Why `tags` cannot tag a run (too many, one too long or empty); empty when they can.
QString tags_problem(const QStringList& tags);

// The name of a run the user did not name, from what tells runs of one experiment apart on a
// chart legend: "mlp, 2 dev × 128, lr 0.05".
QString experiment_name(const RunSpec& spec);

}  // namespace scalelab
