#include "cli/devices_command.h"

#include <spdlog/fmt/fmt.h>

#include <cstdio>

#include "backend/device_inventory.h"
#include "cli/exit_codes.h"
#include "cli/flag_parser.h"
#include "cli/report_problems.h"
#include "train/run_spec.h"

namespace scalelab::cli {

namespace {

constexpr const char* devices_help_command = "scalelab-cli devices --help";

const std::vector<Flag>& devices_flags() {
    static const std::vector<Flag> flags{{"help", "", "show this help", "Flags"}};
    return flags;
}

std::string devices_help() {
    return format_help(
        "scalelab-cli devices",
        "Lists what runs can use on this machine: each GPU with its index, name, memory,\n"
        "compute capability and the GPUs whose memory it can access directly (peers, the fast\n"
        "path between GPUs), or why no GPU can be used; and the CPU cores that a run's CPU\n"
        "devices share.",
        devices_flags(), "Example:\n  scalelab-cli devices");
}

std::string peers_text(const std::vector<int>& peers) {
    if (peers.empty())
        return "none";
    std::string text;
    for (int peer : peers)
        text += (text.empty() ? "" : ", ") + std::to_string(peer);
    return text;
}

void print_gpu(const GpuDescription& gpu) {
    const double gib = double(gpu.memory_bytes) / double(1ull << 30);
    fmt::print("GPU {}: {}, {:.1f} GiB, compute capability {}.{}, peers: {}\n", gpu.index, gpu.name,
               gib, gpu.compute_major, gpu.compute_minor, peers_text(gpu.peers));
}

}  // namespace

int run_devices_command(const std::vector<std::string>& args) {
    const ParsedFlags parsed = parse_flags(args, devices_flags());
    if (parsed.has("help")) {
        std::fputs(devices_help().c_str(), stdout);
        return exit_ok;
    }
    if (!parsed.problems.empty())
        return report_problems(parsed.problems, devices_help_command);

    const DeviceInventory inventory = discover_devices();
    for (const GpuDescription& gpu : inventory.gpus)
        print_gpu(gpu);
    if (inventory.gpus.empty())
        fmt::print("No GPU: {}\n", inventory.no_gpu_reason);
    fmt::print("CPU devices: 1 to {} per run, sharing {} {}\n", max_cpu_devices,
               inventory.cpu_cores, inventory.cpu_cores == 1 ? "core" : "cores");
    return exit_ok;
}

}  // namespace scalelab::cli
