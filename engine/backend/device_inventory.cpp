#include "backend/device_inventory.h"

#include "backend/cpu/cpu_backend.h"

namespace scalelab {

DeviceInventory discover_devices() {
    DeviceInventory inventory;
    inventory.cpu_cores = cpu::available_cores();
    inventory.no_gpu_reason = "this build of ScaleLab has no CUDA backend; runs use CPU devices";
    return inventory;
}

}  // namespace scalelab
