#include "nn/linear.h"

#include <cmath>

namespace scalelab::nn {

Linear::Linear(std::string name, const LinearConfig& cfg) : name_(std::move(name)), cfg_(cfg) {
    // PyTorch's default initialisation: weight and bias uniform in +-1 / sqrt(fan_in).
    const float bound = 1.0f / std::sqrt(float(cfg.in_features));
    weight_ = Parameter{.name = name_ + ".weight",
                        .role = optim::ParamRole::Weight,
                        .size = std::size_t(cfg.in_features) * cfg.out_features,
                        .init_bound = bound,
                        .shape = {cfg.out_features, cfg.in_features}};
    bias_ = Parameter{.name = name_ + ".bias",
                      .role = optim::ParamRole::Bias,
                      .size = std::size_t(cfg.out_features),
                      .init_bound = bound,
                      .shape = {cfg.out_features}};
}

std::string Linear::name() const {
    return name_ + ": linear " + std::to_string(cfg_.in_features) + "->" +
           std::to_string(cfg_.out_features);
}

void Linear::declare(Declarations& out) {
    out.parameters.push_back(&weight_);
    out.parameters.push_back(&bias_);
}

Tensor Linear::forward(const Tensor& x, const Context& ctx) {
    auto& k = kernels_.get(x.shape(), [&] { return ctx.backend.linear(cfg_, x.desc); });
    return k.forward(x, weight_.value, bias_.value);
}

Tensor Linear::backward(const Tensor& dy, const Context& ctx, bool want_dx) {
    const Tensor dx =
        kernels_.last().backward(dy, weight_.value, weight_.grad, bias_.grad, want_dx);
    ctx.gradients_written(weight_);  // declared first, so laid out after the bias
    return dx;
}

}  // namespace scalelab::nn
