#include "cli/flag_parser.h"

#include <algorithm>

namespace scalelab::cli {

bool ParsedFlags::has(const std::string& name) const {
    return std::any_of(given.begin(), given.end(),
                       [&](const GivenFlag& flag) { return flag.name == name; });
}

ParsedFlags parse_flags(const std::vector<std::string>& args, const std::vector<Flag>& flags) {
    ParsedFlags parsed;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "-h") {
            parsed.given.push_back({"help", {}});
            continue;
        }
        if (arg.rfind("--", 0) != 0) {
            parsed.problems.push_back("unexpected argument '" + arg + "': flags start with --");
            continue;
        }
        const std::size_t equals = arg.find('=');
        const std::string name = arg.substr(2, equals == std::string::npos ? equals : equals - 2);
        const auto flag =
            std::find_if(flags.begin(), flags.end(), [&](const Flag& f) { return f.name == name; });
        if (flag == flags.end()) {
            parsed.problems.push_back("unknown flag --" + name);
            continue;
        }
        if (flag->value_name.empty()) {
            if (equals != std::string::npos)
                parsed.problems.push_back("--" + name + " is a switch and takes no value");
            else
                parsed.given.push_back({name, {}});
            continue;
        }
        if (equals != std::string::npos) {
            parsed.given.push_back({name, arg.substr(equals + 1)});
        } else if (i + 1 < args.size()) {
            // The next word is the value even when it starts with '-', so that "--epochs -1"
            // reaches the range check with its number instead of failing as an unknown flag.
            parsed.given.push_back({name, args[++i]});
        } else {
            parsed.problems.push_back("--" + name + " needs a value (" + flag->value_name + ")");
        }
    }
    return parsed;
}

std::string format_help(const std::string& usage, const std::string& description,
                        const std::vector<Flag>& flags, const std::string& epilog) {
    constexpr std::size_t help_column = 30;
    std::string text = "Usage: " + usage + "\n\n" + description + "\n";
    std::string section;
    for (const Flag& flag : flags) {
        if (flag.section != section || &flag == &flags.front()) {
            section = flag.section;
            text += "\n" + section + ":\n";
        }
        std::string left = "  --" + flag.name;
        if (!flag.value_name.empty())
            left += " " + flag.value_name;
        left += left.size() + 2 <= help_column ? std::string(help_column - left.size(), ' ')
                                               : "\n" + std::string(help_column, ' ');
        text += left + flag.help + "\n";
    }
    if (!epilog.empty())
        text += "\n" + epilog + "\n";
    return text;
}

}  // namespace scalelab::cli
