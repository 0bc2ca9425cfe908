// optim::AdamW on the GPU: FusedAdamW's passes as kernels.

#include <memory>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_adamw.h"
#include "backend/cuda/module/fused_optimizer_kinds.h"
#include "backend/cuda/module/segment_norms.cuh"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::AdamWConfig& config,
                                             cudaStream_t stream) {
    load_update_pass<AdamWUpdate>("fused AdamW update");
    return std::make_unique<FusedAdamW<GpuPasses>>(std::move(segments), config, stream);
}

}  // namespace scalelab::cuda
