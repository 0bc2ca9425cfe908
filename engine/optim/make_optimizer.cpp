#include "optim/make_optimizer.h"

#include <utility>

#include "optim/sgd.h"

namespace scalelab::optim {

std::unique_ptr<Optimizer> make_optimizer(const RunSpec& spec, std::vector<ParamSegment> segments) {
    SgdConfig config;
    config.momentum = spec.momentum;
    config.dampening = 0.0;  // the spec has no dampening: the course's SGD never damps
    config.nesterov = spec.nesterov;
    config.weight_decay = spec.weight_decay;
    config.decay_norm_and_bias = spec.decay_norm_and_bias;
    return std::make_unique<Sgd>(std::move(segments), config);
}

}  // namespace scalelab::optim
