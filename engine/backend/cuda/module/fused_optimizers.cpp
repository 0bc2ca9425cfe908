#include "backend/cuda/module/fused_optimizers.h"

#include <string>
#include <utility>

#include "backend/cuda/module/fused_optimizer_kinds.h"
#include "error.h"
#include "optim/make_optimizer.h"

namespace scalelab::cuda {

std::unique_ptr<optim::Optimizer> make_fused_optimizer(const RunSpec& spec,
                                                       std::vector<optim::ParamSegment> segments,
                                                       cudaStream_t stream) {
    // The CPU optimiser make_optimizer makes for the spec, over no segments: it checks the
    // settings (the same InvalidSpec messages, before any GPU memory is touched) and maps the
    // spec to the optimiser's config, which the fused one takes over. With no segments it
    // allocates nothing.
    const std::unique_ptr<optim::Optimizer> checked = optim::make_optimizer(spec, {});
    if (const auto* sgd = dynamic_cast<const optim::Sgd*>(checked.get())) {
        return make_fused_sgd(std::move(segments), sgd->config(), stream);
    }
    if (const auto* lars = dynamic_cast<const optim::Lars*>(checked.get())) {
        return make_fused_lars(std::move(segments), lars->config(), stream);
    }
    if (const auto* lamb = dynamic_cast<const optim::Lamb*>(checked.get())) {
        return make_fused_lamb(std::move(segments), lamb->config(), stream);
    }
    if (const auto* novograd = dynamic_cast<const optim::NovoGrad*>(checked.get())) {
        return make_fused_novograd(std::move(segments), novograd->config(), stream);
    }
    if (const auto* adamw = dynamic_cast<const optim::AdamW*>(checked.get())) {
        return make_fused_adamw(std::move(segments), adamw->config(), stream);
    }
    throw Error(ErrorKind::Internal,
                "the " + std::string(checked->name()) + " optimizer has no fused GPU version");
}

}  // namespace scalelab::cuda
