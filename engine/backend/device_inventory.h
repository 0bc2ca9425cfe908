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
    int compute_major = 0;  // compute capability, major.minor (8.0 for an A100)
    int compute_minor = 0;
    // Indices of the GPUs whose memory it can access directly. With {}, GCC's
    // -Wmissing-field-initializers lets aggregate initialisations that end before it be.
    std::vector<int> peers{};
};

// What a run can use on this machine: the GPUs (found by the CUDA backend, where it is built
// in), and otherwise CPU devices, worker threads that share the machine's cores.
struct DeviceInventory {
    std::vector<GpuDescription> gpus;
    int cpu_cores = 1;
    // Why `gpus` is empty, in a sentence for the user; empty when GPUs were found.
    std::string no_gpu_reason;
};

// Looks once at what the machine has. Cheap enough to call when a window opens.
DeviceInventory discover_devices();

}  // namespace scalelab
