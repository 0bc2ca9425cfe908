#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/gpu_runtime.h"

namespace scalelab::cuda {

// The table of functions libscalelab_cuda.so exports through its one C entry point,
// scalelab_cuda_module(): gpu_runtime.h's functions, implemented with cuBLAS, cuDNN and NCCL.
// abi_version changes whenever this table or a type it passes changes, so that a module left
// over from another build is refused instead of called wrongly.
struct GpuModule {
    static constexpr int current_abi = 2;
    int abi_version = current_abi;
    std::unique_ptr<Backend> (*make_backend)(const GpuBackendOptions&) = nullptr;
    std::shared_ptr<GpuGroup> (*make_group)(const GpuGroupOptions&) = nullptr;
    std::string (*make_group_id)() = nullptr;
    std::vector<comm::AllReduceRow> (*run_allreduce_benchmark)(const std::vector<int>&,
                                                               const std::vector<std::size_t>&,
                                                               int) = nullptr;
};

// The module, loaded on the first call (later calls return the same table). Looks at
// $SCALELAB_CUDA_MODULE first, then where the build put it. Throws Error(InvalidSpec) naming
// the file and the loader's reason when it cannot be loaded or is from another build.
const GpuModule& gpu_module();

}  // namespace scalelab::cuda

// The module's entry point (C linkage, so that dlsym finds it by this name).
extern "C" const scalelab::cuda::GpuModule* scalelab_cuda_module();
