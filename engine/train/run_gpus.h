#pragma once

#include "backend/device_inventory.h"
#include "backend/gpu_selection.h"
#include "train/run_spec.h"

namespace scalelab {

// The GPUs a run on GPUs (spec.device == gpu) trains on: those spec.gpus lists, or else the first
// spec.devices, checked against `inventory`; each problem says what to change. The trainer asks
// this before it starts, and the CLI and the experiment form ask it first, so that a run no GPU
// can take is refused before its data loads.
GpuSelection select_run_gpus(const RunSpec& spec, const DeviceInventory& inventory);

}  // namespace scalelab
