#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli lesson list|run`: lists the lessons (shipped and the user's, with the problem of
// any file that cannot be opened), or trains one lesson's runs one after another and prints how
// each ended; returns the exit code of exit_codes.h. `args` are the words after "lesson".
int run_lesson_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
