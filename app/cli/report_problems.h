#pragma once

#include <string>
#include <vector>

#include "error.h"

namespace scalelab::cli {

// Prints each problem to stderr as "error: ...", one per line (a multi-line message becomes
// several), then where to read about the flags; returns exit_bad_input.
int report_problems(const std::vector<std::string>& problems, const std::string& help_command);

// The exit code for an error the engine threw: a mistake the user can fix (spec, dataset,
// memory) is bad input; anything else is ours.
int exit_code_for(const Error& error);

// Reports `error` as report_problems does and returns exit_code_for(error).
int report_error(const Error& error, const std::string& help_command);

}  // namespace scalelab::cli
