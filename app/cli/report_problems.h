#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// Prints each problem to stderr as "error: ...", one per line (a multi-line message becomes
// several), then where to read about the flags; returns exit_bad_input.
int report_problems(const std::vector<std::string>& problems, const std::string& help_command);

}  // namespace scalelab::cli
