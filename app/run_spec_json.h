#pragma once

#include <QByteArray>
#include <QJsonObject>
#include <QStringList>

#include "train/run_spec.h"

namespace scalelab {

// A RunSpec as a JSON object: one key per field, named as the field, enums as their strings
// ("cosine", "steps"). This is the format of `scalelab-cli train --config` files and of the
// specs the run store keeps, so that a run can be repeated from its record.
QJsonObject run_spec_to_json(const RunSpec& spec);

// Reads a JSON document (a config file) on top of `defaults`: keys that are absent keep the
// default. Throws Error(InvalidSpec) listing its problems, one per line (the first 20, then how
// many more: see ProblemList): a document that is not JSON (with its line and column), a key
// given twice (that alone, with both lines), a key that is not a field, a value of the wrong
// type or an enum string that is not one of the choices. Values are quoted with quoted_text().
// Does not call RunSpec::validate().
RunSpec run_spec_from_json(const QByteArray& document, const RunSpec& defaults = {});

// An experiment file (`scalelab-cli train --config`, the form's Save and Open configuration): a
// run spec and how many runs to make of it over seeds ("repeats": run_group.h). A stored run's
// spec never carries "repeats" (run_spec_from_json refuses it): a group's runs differ only in
// their seed.
struct Experiment {
    RunSpec spec;
    int repeats = 1;
};

// The spec's keys, and "repeats" when it is above 1.
QJsonObject experiment_to_json(const Experiment& experiment);

// As run_spec_from_json, and reads "repeats" (default 1): a value that is not a whole number
// from 1 to most_repeats, or that takes the seeds past the largest, is a problem naming the key
// and the range.
Experiment experiment_from_json(const QByteArray& document, const RunSpec& defaults = {});

// The keys run_spec_to_json writes, in the order of the RunSpec fields.
QStringList run_spec_json_keys();

}  // namespace scalelab
