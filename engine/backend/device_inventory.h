#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scalelab {

// One GPU the engine can drive.
struct GpuDescription {
    int index = 0;
    std::string name;
    std::uint64_t memory_bytes = 0;
};

// What a run can use on this machine: the GPUs (none until the CUDA backend is built in), and
// otherwise CPU devices, worker threads that share the machine's cores.
struct DeviceInventory {
    std::vector<GpuDescription> gpus;
    int cpu_cores = 1;
    // Why `gpus` is empty, in a sentence for the user; empty when GPUs were found.
    std::string no_gpu_reason;
};

// Looks once at what the machine has. Cheap enough to call when a window opens.
DeviceInventory discover_devices();

}  // namespace scalelab
