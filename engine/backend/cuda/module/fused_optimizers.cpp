#include "backend/cuda/module/fused_optimizers.h"

#include <utility>

#include "backend/cuda/module/fused_optimizer_config.h"
#include "backend/cuda/module/fused_optimizer_kinds.h"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused_optimizer(const RunSpec& spec,
                                                       std::vector<optim::ParamSegment> segments,
                                                       cudaStream_t stream) {
    return with_optimizer_config(
        spec, [&](const auto& config) { return make_fused(std::move(segments), config, stream); });
}

}  // namespace scalelab::cuda
