#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <QStringList>

#include <vector>

#include "train/metrics.h"

namespace scalelab {

// The JSON the run store keeps for what a run reports besides its spec (run_spec_json.h):
// the RunInfo said at its start, the targets it reached, its tags. Readers take what they find
// and leave the rest at its default, so that a field added later does not make old rows
// unreadable.
QJsonObject run_info_to_json(const RunInfo& info);
RunInfo run_info_from_json(const QJsonObject& object);

QJsonObject target_to_json(const TargetReached& reached);
QJsonArray targets_to_json(const std::vector<TargetReached>& targets);
std::vector<TargetReached> targets_from_json(const QJsonArray& array);

QJsonArray tags_to_json(const QStringList& tags);
QStringList tags_from_json(const QJsonArray& array);

}  // namespace scalelab
