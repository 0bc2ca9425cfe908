// The one place that knows which backends this build has: CPU devices always, GPUs through the
// CUDA backend where it was built (SCALELAB_WITH_CUDA, set for this file only).

#include <utility>

#include "backend/cpu/cpu_backend.h"
#include "backend/device_inventory.h"
#include "backend/gpu_runtime.h"
#include "error.h"
#if SCALELAB_WITH_CUDA
#include "backend/cuda/cuda_devices.h"
#include "backend/cuda/gpu_module.h"
#endif

namespace scalelab {

DeviceInventory discover_devices() {
    DeviceInventory inventory;
    inventory.cpu_cores = cpu::available_cores();
#if SCALELAB_WITH_CUDA
    cuda::GpuDiscovery discovery = cuda::discover_gpus();
    inventory.gpus = std::move(discovery.gpus);
    inventory.no_gpu_reason = std::move(discovery.no_gpu_reason);
#else
    inventory.no_gpu_reason = "this build of ScaleLab has no CUDA backend; runs use CPU devices";
#endif
    return inventory;
}

#if SCALELAB_WITH_CUDA

std::unique_ptr<Backend> make_gpu_backend(const GpuBackendOptions& options) {
    return cuda::gpu_module().make_backend(options);
}

std::shared_ptr<GpuGroup> make_gpu_group(const GpuGroupOptions& options) {
    return cuda::gpu_module().make_group(options);
}

std::string make_gpu_group_id() {
    return cuda::gpu_module().make_group_id();
}

std::vector<comm::AllReduceRow> run_gpu_allreduce_benchmark(
    const std::vector<int>& gpus, const std::vector<std::size_t>& sizes_bytes, int iterations) {
    return cuda::gpu_module().run_allreduce_benchmark(gpus, sizes_bytes, iterations);
}

#else

namespace {

[[noreturn]] void no_gpu_backend() {
    throw Error(ErrorKind::InvalidSpec,
                "this build of ScaleLab has no CUDA backend: use CPU devices, or rebuild where "
                "the CUDA toolkit 12+, cuDNN 9 and NCCL 2 are installed");
}

}  // namespace

std::unique_ptr<Backend> make_gpu_backend(const GpuBackendOptions&) {
    no_gpu_backend();
}

std::shared_ptr<GpuGroup> make_gpu_group(const GpuGroupOptions&) {
    no_gpu_backend();
}

std::string make_gpu_group_id() {
    no_gpu_backend();
}

std::vector<comm::AllReduceRow> run_gpu_allreduce_benchmark(const std::vector<int>&,
                                                            const std::vector<std::size_t>&, int) {
    no_gpu_backend();
}

#endif

}  // namespace scalelab
