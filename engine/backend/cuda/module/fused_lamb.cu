// optim::Lamb on the GPU: FusedLamb's passes as kernels.

#include <memory>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_lamb.h"
#include "backend/cuda/module/fused_optimizer_kinds.h"
#include "backend/cuda/module/segment_norms.cuh"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::LambConfig& config, cudaStream_t stream) {
    load_sum_pass<2, LambNormTerms, LambTrust>("fused LAMB moments and norms");
    load_update_pass<LambUpdate>("fused LAMB update");
    return std::make_unique<FusedLamb<GpuPasses>>(std::move(segments), config, stream);
}

}  // namespace scalelab::cuda
