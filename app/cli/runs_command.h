#pragma once

#include <QString>

#include <optional>
#include <string>
#include <vector>

#include "run_group.h"

namespace scalelab {
class RunStore;
}  // namespace scalelab

namespace scalelab::cli {

// `scalelab-cli runs list|show|export|import|delete`: the runs kept in the run store. Returns
// the exit code of exit_codes.h; an unknown id, a store that cannot be opened or a file that
// cannot be imported is bad input, and nothing is changed. `args` are the words after "runs".
int run_runs_command(const std::vector<std::string>& args);

// A group of stored runs (`members`, in the order they were added, at least one) as `runs list`
// and `train --repeats` print it: its summary and its name (group_label).
struct StoredGroup {
    GroupSummary summary;
    QString label;
};
StoredGroup stored_group(const std::vector<const StoredRun*>& members);

// A figure's spread over a group ("0.8970 ± 0.0030", run_group.h spread_text); "-" when no run
// has it.
QString figure_text(const GroupSummary& summary, const std::optional<Spread>& spread, int decimals);

}  // namespace scalelab::cli
