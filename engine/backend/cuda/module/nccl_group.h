#pragma once

#include <memory>
#include <string>

#include "backend/gpu_runtime.h"

namespace scalelab::cuda {

// gpu_runtime.h's make_gpu_group, with NCCL (see GpuGroup).
std::shared_ptr<GpuGroup> make_nccl_group(const GpuGroupOptions& options);

// gpu_runtime.h's make_gpu_group_id: ncclGetUniqueId's bytes.
std::string make_nccl_group_id();

}  // namespace scalelab::cuda
