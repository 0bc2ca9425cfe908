#pragma once

#include <memory>

#include "backend/gpu_runtime.h"

namespace scalelab::cuda {

// gpu_runtime.h's make_gpu_group, with NCCL (see GpuGroup).
std::shared_ptr<GpuGroup> make_nccl_group(const GpuGroupOptions& options);

}  // namespace scalelab::cuda
