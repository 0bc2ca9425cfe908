#include "cli/bench_processes.h"

#include <spdlog/fmt/fmt.h>

#include <algorithm>

#include "cli/exit_codes.h"
#include "cli/report_problems.h"

namespace scalelab::cli {

namespace {

// The flags as one text, each argument apart (an argument may hold spaces).
std::string joined(const std::vector<std::string>& args, char separator) {
    std::string text;
    for (const std::string& arg : args)
        text += (text.empty() ? "" : std::string(1, separator)) + arg;
    return text;
}

}  // namespace

BenchProcesses join_bench_processes(const std::vector<std::string>& args,
                                    const std::string& help_command) {
    BenchProcesses out;
    std::optional<LaunchedProcesses> processes = join_cli_processes(bench_process_timeout);
    if (!processes) {
        out.exit_code = exit_failed;
        return out;
    }
    if (!processes->alone()) {
        const std::vector<std::string> all =
            processes->group->all_gather_text(joined(args, '\x1f'));
        for (std::size_t p = 1; p < all.size(); ++p) {
            if (all[p] == all[0])
                continue;
            if (!processes->leader()) {
                out.exit_code = exit_bad_input;  // process 0 says why, once
                return out;
            }
            const auto spaced = [](std::string text) {
                std::replace(text.begin(), text.end(), '\x1f', ' ');
                return text;
            };
            out.exit_code = report_problems(
                {fmt::format("the processes were not started with the same flags: process {} "
                             "(host {}) with '{}', process 0 (host {}) with '{}'; start every "
                             "process with the same flags",
                             p, processes->hosts[p], spaced(all[p]), processes->hosts[0],
                             spaced(all[0]))},
                help_command);
            return out;
        }
    }
    out.processes = std::move(processes);
    return out;
}

}  // namespace scalelab::cli
