#include "optim/make_optimizer.h"

#include <string>
#include <utility>

#include "error.h"
#include "optim/adamw.h"
#include "optim/lamb.h"
#include "optim/lars.h"
#include "optim/novograd.h"
#include "optim/sgd.h"

namespace scalelab::optim {

std::unique_ptr<Optimizer> make_optimizer(const RunSpec& spec, std::vector<ParamSegment> segments) {
    switch (spec.optimizer) {
        case OptimizerKind::Sgd: {
            SgdConfig config;
            config.momentum = spec.momentum;
            config.dampening = 0.0;  // the spec has no dampening: the course's SGD never damps
            config.nesterov = spec.nesterov;
            config.weight_decay = spec.weight_decay;
            config.decay_norm_and_bias = spec.decay_norm_and_bias;
            return std::make_unique<Sgd>(std::move(segments), config);
        }
        case OptimizerKind::Lars: {
            LarsConfig config;
            config.momentum = spec.momentum;
            config.nesterov = spec.nesterov;
            config.weight_decay = spec.weight_decay;
            config.trust_coefficient = spec.trust_coefficient;
            config.larc = spec.larc;
            config.decay_norm_and_bias = spec.decay_norm_and_bias;
            config.adapt_norm_and_bias = spec.adapt_norm_and_bias;
            return std::make_unique<Lars>(std::move(segments), config);
        }
        case OptimizerKind::Lamb: {
            LambConfig config;
            config.beta1 = spec.beta1;
            config.beta2 = spec.beta2;
            config.eps = spec.eps;
            config.weight_decay = spec.weight_decay;
            config.trust_clamp = spec.trust_clamp;
            config.decay_norm_and_bias = spec.decay_norm_and_bias;
            config.adapt_norm_and_bias = spec.adapt_norm_and_bias;
            return std::make_unique<Lamb>(std::move(segments), config);
        }
        case OptimizerKind::NovoGrad: {
            NovoGradConfig config;
            config.beta1 = spec.beta1;
            config.beta2 = spec.beta2;
            config.eps = spec.eps;
            config.weight_decay = spec.weight_decay;
            config.grad_averaging = spec.grad_averaging;
            config.decay_norm_and_bias = spec.decay_norm_and_bias;
            config.adapt_norm_and_bias = spec.adapt_norm_and_bias;
            return std::make_unique<NovoGrad>(std::move(segments), config);
        }
        case OptimizerKind::AdamW: {
            AdamWConfig config;
            config.beta1 = spec.beta1;
            config.beta2 = spec.beta2;
            config.eps = spec.eps;
            config.weight_decay = spec.weight_decay;
            config.decay_norm_and_bias = spec.decay_norm_and_bias;
            return std::make_unique<AdamW>(std::move(segments), config);
        }
    }
    throw Error(ErrorKind::InvalidSpec, "unknown optimizer (" +
                                            std::to_string(static_cast<int>(spec.optimizer)) +
                                            "); use sgd, lars, lamb, novograd or adamw");
}

}  // namespace scalelab::optim
