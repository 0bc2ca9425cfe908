// optim::Sgd on the GPU: FusedSgd's pass as a kernel.

#include <memory>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_optimizer_kinds.h"
#include "backend/cuda/module/fused_sgd.h"
#include "backend/cuda/module/segment_norms.cuh"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::SgdConfig& config, cudaStream_t stream) {
    load_update_pass<SgdUpdate>("fused SGD update");
    return std::make_unique<FusedSgd<GpuPasses>>(std::move(segments), config, stream);
}

}  // namespace scalelab::cuda
