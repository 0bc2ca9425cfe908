// optim::Lars on the GPU: FusedLars's passes as kernels.

#include <memory>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_lars.h"
#include "backend/cuda/module/fused_optimizer_kinds.h"
#include "backend/cuda/module/segment_norms.cuh"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::LarsConfig& config, cudaStream_t stream) {
    load_sum_pass<2, LarsNormTerms, LarsLocalLr>("fused LARS norms");
    load_update_pass<LarsUpdate>("fused LARS update");
    return std::make_unique<FusedLars<GpuPasses>>(std::move(segments), config, stream);
}

}  // namespace scalelab::cuda
