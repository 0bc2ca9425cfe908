#pragma once

#include <QString>
#include <QStringList>

#include <optional>
#include <vector>

#include "run_record.h"
#include "train/spec_fields.h"

namespace scalelab {

// "What differs": the experiment fields (engine/train/spec_fields.h keys) whose values differ
// among some runs, for the run table's configuration column and the Compare dialog, so that a
// reader sees "batch 256 · lr 0.4" rather than two whole configurations to tell apart.

// A field's value in `spec` as a comparison reads it: field_value_text(), or nothing when the
// field does not apply to the spec (beta1 of an SGD run), so that a setting without effect never
// counts as a difference.
std::optional<QString> compared_value(const SpecField& field, const RunSpec& spec);

// The keys of the fields whose compared values differ among `sets`, in spec_fields() order. A
// set is a run alone or a group's members, which differ in their seed by design: a set counts
// with its first member's spec and its lowest seed, so that two groups launched from the same
// seed differ in what was chosen, not in their seeds.
QStringList fields_that_differ(const std::vector<std::vector<const RunRecord*>>& sets);
// The same for `runs`, each set a group's members among them (RunRecord::group) or a run outside
// groups: the seed counts between runs outside groups and between groups, never within one.
QStringList fields_that_differ(const std::vector<const RunRecord*>& runs);

// "batch 256 · lr 0.4 · milestones 30,60": the key and compared value of each of `fields` in
// `spec`, leaving out those that do not apply to it ("none" for an empty value).
QString fields_text(const RunSpec& spec, const QStringList& fields);

// The value of `field` shared by `specs` (a group's members: the same in all but the seed), or
// for values that differ their range "1–5" (numbers) or their list "a, b"; "—" where it applies
// to none of them.
QString shared_value_text(const SpecField& field, const std::vector<const RunSpec*>& specs);

}  // namespace scalelab
