#pragma once

#include <string>
#include <vector>

#include "error.h"
#include "run_store.h"

namespace scalelab::cli {

// Prints each problem to stderr as "error: ...", one per line (a multi-line message becomes
// several), then where to read about the flags; returns exit_bad_input.
int report_problems(const std::vector<std::string>& problems, const std::string& help_command);

// The exit code for an error the engine threw: a mistake the user can fix (spec, dataset,
// memory) is bad input; anything else is ours.
int exit_code_for(const Error& error);

// Reports `error` as report_problems does and returns exit_code_for(error).
int report_error(const Error& error, const std::string& help_command);

// The exit code for a run store's error: a store that cannot be opened or read, or a run id
// that is not in it, is bad input; a write that failed (a full disk) is the machine's.
int exit_code_for(const StoreError& error);

// Reports `error`, with `advice` in brackets after it when there is some, as report_problems
// does, and returns exit_code_for(error).
int report_store_error(const StoreError& error, const std::string& help_command,
                       const std::string& advice = {});

}  // namespace scalelab::cli
