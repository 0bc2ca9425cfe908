#include "backend/device_inventory.h"

#include <utility>

#include "backend/cpu/cpu_backend.h"
#if SCALELAB_WITH_CUDA
#include "backend/cuda/cuda_devices.h"
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

}  // namespace scalelab
