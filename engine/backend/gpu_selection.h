#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/device_inventory.h"

namespace scalelab {

// The GPUs a run asks for, checked against what the machine has.
struct GpuSelection {
    std::vector<int> indices;           // the GPUs' indices, in the order asked for
    std::vector<std::string> problems;  // each says what to change; empty: `indices` is usable
};

// The first `count` GPUs of `inventory`.
GpuSelection select_first_gpus(int count, const DeviceInventory& inventory);

// The GPUs a comma-separated list of indices names, such as "0,2". Each GPU may be listed once:
// a GPU runs one device (NCCL has one rank per GPU).
GpuSelection select_listed_gpus(std::string_view list, const DeviceInventory& inventory);

// The GPUs `indices` names (a run spec's gpus), each present and listed once.
GpuSelection select_gpus(std::vector<int> indices, const DeviceInventory& inventory);

}  // namespace scalelab
