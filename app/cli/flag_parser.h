#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// One command-line flag, written --name VALUE, --name=VALUE, or --name alone for a switch.
struct Flag {
    std::string name;        // without the leading "--"
    std::string value_name;  // shown in the help; empty for a switch, which takes no value
    std::string help;
    std::string section;      // the help groups flags under this heading
    bool repeatable = false;  // may be given more than once (each value counts: --tag)
};

struct GivenFlag {
    std::string name;
    std::string value;  // empty for a switch
};

struct ParsedFlags {
    std::vector<GivenFlag> given;  // in command-line order, so that later flags win
    std::vector<std::string> problems;

    bool has(const std::string& name) const;
};

// Splits `args` (the words after the subcommand) into known flags and their values. Unknown
// flags, missing values (a flag where its value should be: "--model --epochs 1"), a value given
// to a switch, a flag that is not repeatable given twice, and stray words become problems; "-h"
// is read as "--help". Values are not interpreted here: the command knows what each one means.
ParsedFlags parse_flags(const std::vector<std::string>& args, const std::vector<Flag>& flags);

// "usage" and "description" first, then the flags by section, then "epilog".
std::string format_help(const std::string& usage, const std::string& description,
                        const std::vector<Flag>& flags, const std::string& epilog);

}  // namespace scalelab::cli
