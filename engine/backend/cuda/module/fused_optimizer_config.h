#pragma once

// How a fused optimiser is made for a run's spec, on the GPU (make_fused_optimizer) and in the
// tests that run the fused optimisers' passes on the host.

#include <memory>
#include <string>

#include "error.h"
#include "optim/adamw.h"
#include "optim/lamb.h"
#include "optim/lars.h"
#include "optim/make_optimizer.h"
#include "optim/novograd.h"
#include "optim/sgd.h"
#include "train/run_spec.h"

namespace scalelab::cuda {

// Returns make(config), with config the settings of the CPU optimiser that optim::make_optimizer
// makes for `spec`: an optim::SgdConfig, LarsConfig, LambConfig, NovoGradConfig or AdamWConfig.
// That CPU optimiser is made over no segments: it checks the spec (the same InvalidSpec
// messages, before any GPU memory is touched) and maps it to its config, which the fused one
// takes over, and it allocates nothing.
template <class Make>
std::unique_ptr<optim::Optimizer> with_optimizer_config(const RunSpec& spec, const Make& make) {
    const std::unique_ptr<optim::Optimizer> checked = optim::make_optimizer(spec, {});
    if (const auto* sgd = dynamic_cast<const optim::Sgd*>(checked.get())) {
        return make(sgd->config());
    }
    if (const auto* lars = dynamic_cast<const optim::Lars*>(checked.get())) {
        return make(lars->config());
    }
    if (const auto* lamb = dynamic_cast<const optim::Lamb*>(checked.get())) {
        return make(lamb->config());
    }
    if (const auto* novograd = dynamic_cast<const optim::NovoGrad*>(checked.get())) {
        return make(novograd->config());
    }
    if (const auto* adamw = dynamic_cast<const optim::AdamW*>(checked.get())) {
        return make(adamw->config());
    }
    throw Error(ErrorKind::Internal,
                "the " + std::string(checked->name()) + " optimizer has no fused version");
}

}  // namespace scalelab::cuda
