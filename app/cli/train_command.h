#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli train`: reads the flags (and --config), checks the spec, loads the dataset,
// trains, and returns the exit code of exit_codes.h. `args` are the words after "train".
int run_train_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
