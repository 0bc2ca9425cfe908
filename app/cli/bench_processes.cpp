#include "cli/bench_processes.h"

#include <spdlog/fmt/fmt.h>

#include "cli/exit_codes.h"
#include "cli/report_problems.h"

namespace scalelab::cli {

namespace {

// Arguments travel as one text, each apart (an argument may hold spaces).
constexpr char argument_separator = '\x1f';

std::string joined(const std::vector<std::string>& args, const std::string& separator) {
    std::string text;
    for (const std::string& arg : args)
        text += (text.empty() ? "" : separator) + arg;
    return text;
}

std::vector<std::string> split(const std::string& text) {
    std::vector<std::string> args;
    std::size_t start = 0;
    for (std::size_t at; (at = text.find(argument_separator, start)) != std::string::npos;
         start = at + 1)
        args.push_back(text.substr(start, at - start));
    if (!text.empty())
        args.push_back(text.substr(start));
    return args;
}

}  // namespace

std::string different_flags(const std::vector<std::vector<std::string>>& flags,
                            const std::vector<std::string>& hosts) {
    for (std::size_t p = 1; p < flags.size(); ++p)
        if (flags[p] != flags[0])
            return fmt::format(
                "the processes were not started with the same flags: process {} (host {}) with "
                "'{}', process 0 (host {}) with '{}'; start every process with the same flags",
                p, hosts[p], joined(flags[p], " "), hosts[0], joined(flags[0], " "));
    return {};
}

BenchProcesses join_bench_processes(const std::vector<std::string>& args,
                                    const std::string& help_command) {
    BenchProcesses out;
    std::optional<LaunchedProcesses> processes = join_cli_processes(bench_process_timeout);
    if (!processes) {
        out.exit_code = exit_failed;
        return out;
    }
    std::vector<std::vector<std::string>> flags;
    for (const std::string& text :
         processes->group->all_gather_text(joined(args, std::string(1, argument_separator))))
        flags.push_back(split(text));
    if (const std::string difference = different_flags(flags, processes->hosts);
        !difference.empty()) {
        // Process 0 says why, once.
        out.exit_code =
            processes->leader() ? report_problems({difference}, help_command) : exit_bad_input;
        return out;
    }
    out.processes = std::move(processes);
    return out;
}

}  // namespace scalelab::cli
