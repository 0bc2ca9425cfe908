// optim::NovoGrad on the GPU: FusedNovoGrad's passes as kernels.

#include <memory>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_novograd.h"
#include "backend/cuda/module/fused_optimizer_kinds.h"
#include "backend/cuda/module/segment_norms.cuh"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::NovoGradConfig& config,
                                             cudaStream_t stream) {
    load_sum_pass<1, GradientNormTerms, TensorSecondMoment>("fused NovoGrad gradient norms");
    load_update_pass<NovoGradUpdate>("fused NovoGrad update");
    return std::make_unique<FusedNovoGrad<GpuPasses>>(std::move(segments), config, stream);
}

}  // namespace scalelab::cuda
