#pragma once

#include <string>
#include <vector>

#include "cli/flag_parser.h"

namespace scalelab::cli {

// The problem of a flag whose value is not what it takes: "--<name> expects <what>, got
// '<value>'", the value quoted with quoted_text() (cut if long, control characters escaped).
std::string expects(const std::string& name, const std::string& what, const std::string& value);

// Reading a given flag's value into an option. Each returns "" after storing the value, or a
// problem that names the flag and says what it expects; `out` is then left as it was.

// A whole number >= 1.
std::string read_positive(const GivenFlag& given, int& out);

// Whole numbers >= 1, comma-separated, at least one.
std::string read_positive_list(const GivenFlag& given, std::vector<int>& out);

// A whole number from `min` to `max`, both included.
std::string read_in_range(const GivenFlag& given, int min, int max, int& out);

}  // namespace scalelab::cli
