// The module's one exported symbol: the table gpu_module() loads (see gpu_module.h).

#include <memory>

#include "backend/cuda/gpu_module.h"
#include "backend/cuda/module/cuda_backend.h"
#include "backend/cuda/module/nccl_allreduce_benchmark.h"
#include "backend/cuda/module/nccl_group.h"

namespace {

std::unique_ptr<scalelab::Backend> make_backend(const scalelab::GpuBackendOptions& options) {
    return std::make_unique<scalelab::cuda::CudaBackend>(options);
}

const scalelab::cuda::GpuModule module_table{
    .abi_version = scalelab::cuda::GpuModule::current_abi,
    .make_backend = &make_backend,
    .make_group = &scalelab::cuda::make_nccl_group,
    .make_group_id = &scalelab::cuda::make_nccl_group_id,
    .run_allreduce_benchmark = &scalelab::cuda::run_nccl_allreduce_benchmark,
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const scalelab::cuda::GpuModule*
scalelab_cuda_module() {
    return &module_table;
}
