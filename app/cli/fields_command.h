#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli fields`: every experiment field (key, flag, label, default, values, when it
// applies, what it does) as Markdown, the text of docs/fields.md. Only --help is a flag.
int run_fields_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
