#include "cli/flag_parser.h"

#include <algorithm>

#include "problem_list.h"
#include "quoted_text.h"

namespace scalelab::cli {

bool ParsedFlags::has(const std::string& name) const {
    return std::any_of(given.begin(), given.end(),
                       [&](const GivenFlag& flag) { return flag.name == name; });
}

ParsedFlags parse_flags(const std::vector<std::string>& args, const std::vector<Flag>& flags) {
    ParsedFlags parsed;
    ProblemList problems;
    const auto find = [&](const std::string& name) {
        return std::find_if(flags.begin(), flags.end(),
                            [&](const Flag& f) { return f.name == name; });
    };
    // A word that names a known flag, where a value was expected.
    const auto is_flag = [&](const std::string& word) {
        return word.rfind("--", 0) == 0 && find(word.substr(2, word.find('=') - 2)) != flags.end();
    };
    // Refuses a second value for a flag that takes one value only, naming both.
    const auto add = [&](const Flag& flag, std::string value) {
        const auto earlier =
            std::find_if(parsed.given.begin(), parsed.given.end(),
                         [&](const GivenFlag& given) { return given.name == flag.name; });
        if (earlier != parsed.given.end() && !flag.repeatable) {
            problems.add("--" + flag.name + " was given twice" +
                         (flag.value_name.empty() ? std::string()
                                                  : " (" + quoted_text(earlier->value) + ", then " +
                                                        quoted_text(value) + ")") +
                         ": give it once");
            return;
        }
        parsed.given.push_back({flag.name, std::move(value)});
    };
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = args[i];
        if (arg == "-h") {
            parsed.given.push_back({"help", {}});
            continue;
        }
        if (arg.rfind("--", 0) != 0) {
            problems.add("unexpected argument " + quoted_text(arg) + ": flags start with --");
            continue;
        }
        const std::size_t equals = arg.find('=');
        const std::string name = arg.substr(2, equals == std::string::npos ? equals : equals - 2);
        const auto flag = find(name);
        if (flag == flags.end()) {
            problems.add("unknown flag " + quoted_text("--" + name));
            continue;
        }
        if (flag->value_name.empty()) {
            if (equals != std::string::npos)
                problems.add("--" + name + " is a switch and takes no value");
            else
                add(*flag, {});
            continue;
        }
        if (equals != std::string::npos) {
            add(*flag, arg.substr(equals + 1));
        } else if (i + 1 < args.size() && !is_flag(args[i + 1])) {
            // The next word is the value even when it starts with '-', so that "--epochs -1"
            // reaches the range check with its number instead of failing as an unknown flag.
            add(*flag, args[++i]);
        } else {
            problems.add("--" + name + " needs a value (" + flag->value_name + ")");
        }
    }
    parsed.problems = problems.lines();
    return parsed;
}

namespace {

// `text` broken at spaces into lines of at most `width` columns, the lines after the first
// indented to `indent` (the help column); a word longer than a line stays whole.
std::string wrapped(const std::string& text, std::size_t indent, std::size_t width) {
    std::string out;
    std::size_t column = indent;
    std::size_t at = 0;
    while (at < text.size()) {
        const std::size_t space = text.find(' ', at);
        const std::size_t end = space == std::string::npos ? text.size() : space;
        const std::string word = text.substr(at, end - at);
        if (column > indent && column + 1 + word.size() > width) {
            out += "\n" + std::string(indent, ' ');
            column = indent;
        } else if (column > indent) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
        at = end + 1;
    }
    return out;
}

}  // namespace

std::string format_help(const std::string& usage, const std::string& description,
                        const std::vector<Flag>& flags, const std::string& epilog) {
    constexpr std::size_t help_column = 30;
    constexpr std::size_t line_width = 100;
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
        text += left + wrapped(flag.help, help_column, line_width) + "\n";
    }
    if (!epilog.empty())
        text += "\n" + epilog + "\n";
    return text;
}

}  // namespace scalelab::cli
