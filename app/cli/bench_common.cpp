#include "cli/bench_common.h"

#include <cstdio>

#include "cli/exit_codes.h"
#include "cli/flag_readers.h"
#include "cli/log_setup.h"
#include "cli/report_problems.h"
#include "error.h"

namespace scalelab::cli {

std::vector<Flag> with_bench_output_flags(std::vector<Flag> flags) {
    const std::string io = "Output";
    flags.push_back({"json", "", "print one JSON object per result row", io});
    flags.push_back(
        {"log-level", "LEVEL", log_level_names() + " (default info), logs go to stderr", io});
    flags.push_back({"help", "", "show this help", io});
    return flags;
}

std::vector<std::string> parse_bench_flags(const std::vector<std::string>& args,
                                           const std::vector<Flag>& flags,
                                           BenchOutputOptions& output,
                                           const ApplyBenchFlag& apply) {
    const ParsedFlags parsed = parse_flags(args, flags);
    std::vector<std::string> problems = parsed.problems;
    output.help = parsed.has("help");
    for (const GivenFlag& given : parsed.given) {
        std::string problem;
        if (given.name == "json") {
            output.json = true;
        } else if (given.name == "log-level") {
            if (is_log_level(given.value))
                output.log_level = given.value;
            else
                problem = expects("log-level", log_level_names(), given.value);
        } else if (given.name != "help") {
            problem = apply(given);
        }
        if (!problem.empty())
            problems.push_back(std::move(problem));
    }
    return problems;
}

std::optional<int> start_bench(const BenchOutputOptions& output,
                               const std::vector<std::string>& problems, const std::string& help,
                               const std::string& help_command) {
    if (output.help) {
        std::fputs(help.c_str(), stdout);
        return exit_ok;
    }
    if (!problems.empty())
        return report_problems(problems, help_command);
    setup_logging(output.log_level);
    return std::nullopt;
}

std::optional<int> measure_or_report(const std::function<void()>& measure,
                                     const std::string& help_command) {
    try {
        measure();
    } catch (const Error& error) {
        return report_error(error, help_command);
    }
    return std::nullopt;
}

}  // namespace scalelab::cli
