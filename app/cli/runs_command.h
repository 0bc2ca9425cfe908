#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli runs list|show|export|import|delete`: the runs kept in the run store. Returns
// the exit code of exit_codes.h; an unknown id, a store that cannot be opened or a file that
// cannot be imported is bad input, and nothing is changed. `args` are the words after "runs".
int run_runs_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
