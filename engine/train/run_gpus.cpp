#include "train/run_gpus.h"

namespace scalelab {

GpuSelection select_run_gpus(const RunSpec& spec, const DeviceInventory& inventory) {
    return spec.gpus.empty() ? select_first_gpus(spec.devices, inventory)
                             : select_gpus(spec.gpus, inventory);
}

}  // namespace scalelab
