#include "cli/launched_processes.h"

#include <spdlog/fmt/fmt.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

namespace scalelab::cli {

std::string follower_prefix(const comm::ProcessGroup& group) {
    return fmt::format("process {} on {}", group.index(), group.host());
}

bool LaunchedProcesses::on_one_host() const {
    return std::all_of(hosts.begin(), hosts.end(),
                       [this](const std::string& host) { return host == hosts.front(); });
}

std::string LaunchedProcesses::layout(int devices) const {
    std::string names;
    for (const std::string& host : hosts)
        names += (names.empty() ? "" : ", ") + host;
    return fmt::format("{} processes x {} device{} on hosts {}", group->count(), devices,
                       devices == 1 ? "" : "s", names);
}

std::optional<LaunchedProcesses> join_cli_processes(std::chrono::milliseconds timeout) {
    LaunchedProcesses processes;
    try {
        processes.group = comm::join_launched_processes(timeout);
        processes.hosts = processes.group->all_gather_text(processes.group->host());
    } catch (const std::exception& error) {
        std::fprintf(stderr, "error: cannot join the processes the launcher started: %s\n",
                     error.what());
        return std::nullopt;
    }
    if (!processes.leader()) {
        spdlog::set_level(spdlog::level::err);
        spdlog::set_pattern(fmt::format("[{}] %v", follower_prefix(*processes.group)));
    }
    return processes;
}

}  // namespace scalelab::cli
