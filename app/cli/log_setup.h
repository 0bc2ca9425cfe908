#pragma once

#include <string>

namespace scalelab::cli {

// The names --log-level accepts, for help texts: trace|debug|info|warn|error|off.
const std::string& log_level_names();
bool is_log_level(const std::string& name);

// Sends spdlog's default logger to stderr at `level`, so that stdout carries only the
// command's results (progress, summaries, bench rows) and stays parseable by scripts.
void setup_logging(const std::string& level);

}  // namespace scalelab::cli
