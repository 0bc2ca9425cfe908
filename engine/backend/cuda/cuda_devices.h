#pragma once

#include <cuda_runtime_api.h>

#include <optional>
#include <string>
#include <vector>

#include "backend/device_inventory.h"

namespace scalelab::cuda {

// What the CUDA runtime says about the machine before any GPU is looked at.
struct CudaProbe {
    // Versions as CUDA writes them, 1000 * major + 10 * minor (12040 is 12.4).
    int driver_version = 0;   // what the installed NVIDIA driver supports; 0: no driver
    int runtime_version = 0;  // the CUDA runtime this build uses
    cudaError_t device_count_status = cudaSuccess;  // cudaGetDeviceCount's answer
    int device_count = 0;
    std::optional<std::string> visible_devices;  // CUDA_VISIBLE_DEVICES, when it is set
};

// Asks the CUDA runtime for the driver's and its own version and for the number of GPUs.
CudaProbe probe_cuda();

// Why no GPU of `probe` can be used, as a sentence for the user that ends with "; runs use CPU
// devices": no driver, a driver too old for this build's runtime, no GPU, or the runtime's
// error. Empty when GPUs can be used.
std::string no_gpu_reason(const CudaProbe& probe);

// The GPUs a run can use, or none and why.
struct GpuDiscovery {
    std::vector<GpuDescription> gpus;
    std::string no_gpu_reason;  // empty when `gpus` is not
};

// Every GPU this build has code for, with its name, memory, compute capability and the GPUs it
// can access directly.
GpuDiscovery discover_gpus();

// The lowest compute capability this build has GPU code for, as 10 * major + minor (80 for 8.0):
// the smallest of CMAKE_CUDA_ARCHITECTURES. 0 when the build does not say (then every GPU is
// kept).
int lowest_supported_architecture();

// The GPUs of `described` whose compute capability is at least `lowest` (10 * major + minor),
// and, when that leaves none, why, naming each GPU left out.
GpuDiscovery keep_supported_gpus(std::vector<GpuDescription> described, int lowest);

// Throws Error(InvalidSpec) unless every index names a GPU of this machine: the message gives
// the reason when no GPU can be used, or the indices there are.
void require_gpus(const std::vector<int>& gpus);

}  // namespace scalelab::cuda
