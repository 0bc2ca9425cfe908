#include "nn/conv2d.h"

#include <cmath>

namespace scalelab::nn {

Conv2d::Conv2d(std::string name, const Conv2dConfig& cfg) : name_(std::move(name)), cfg_(cfg) {
    // PyTorch's default: kaiming_uniform_(a = sqrt(5)) gives bound = 1 / sqrt(fan_in), and the
    // bias is uniform in the same bound.
    const std::size_t fan_in = std::size_t(cfg.in_channels) * cfg.kernel * cfg.kernel;
    const float bound = 1.0f / std::sqrt(float(fan_in));
    weight_ = Parameter{.name = name_ + ".weight",
                        .role = optim::ParamRole::Weight,
                        .size = fan_in * std::size_t(cfg.out_channels),
                        .init_bound = bound,
                        .shape = {cfg.out_channels, cfg.in_channels, cfg.kernel, cfg.kernel}};
    bias_ = Parameter{.name = name_ + ".bias",
                      .role = optim::ParamRole::Bias,
                      .size = std::size_t(cfg.out_channels),
                      .init_bound = bound,
                      .shape = {cfg.out_channels}};
}

std::string Conv2d::name() const {
    return name_ + ": conv " + std::to_string(cfg_.kernel) + "x" + std::to_string(cfg_.kernel) +
           " " + std::to_string(cfg_.in_channels) + "->" + std::to_string(cfg_.out_channels) +
           (cfg_.stride > 1 ? " stride " + std::to_string(cfg_.stride) : "");
}

Shape Conv2d::output_shape(const Shape& x) const {
    return Shape{x.n, cfg_.out_channels, (x.h + 2 * cfg_.padding - cfg_.kernel) / cfg_.stride + 1,
                 (x.w + 2 * cfg_.padding - cfg_.kernel) / cfg_.stride + 1};
}

double Conv2d::forward_flops(const Shape& x) const {
    const Shape y = output_shape(x);
    return 2.0 * cfg_.in_channels * cfg_.kernel * cfg_.kernel * y.c * y.h * y.w;
}

void Conv2d::declare(Declarations& out) {
    out.parameters.push_back(&weight_);
    if (cfg_.bias)
        out.parameters.push_back(&bias_);
}

Tensor Conv2d::forward(const Tensor& x, const Context& ctx) {
    auto& k = kernels_.get(x.shape(), [&] { return ctx.backend.conv2d(cfg_, x.desc); });
    return k.forward(x, weight_.value, cfg_.bias ? bias_.value : nullptr);
}

Tensor Conv2d::backward(const Tensor& dy, const Context& ctx, bool want_dx) {
    const Tensor dx = kernels_.last().backward(dy, weight_.value, weight_.grad,
                                               cfg_.bias ? bias_.grad : nullptr, want_dx);
    ctx.gradients_written(weight_);  // declared first, so laid out after the bias
    return dx;
}

}  // namespace scalelab::nn
