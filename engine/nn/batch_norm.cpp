#include "nn/batch_norm.h"

namespace scalelab::nn {

BatchNorm::BatchNorm(std::string name, int channels, Activation activation)
    : name_(std::move(name)) {
    cfg_.channels = channels;
    cfg_.fused_relu = activation == Activation::Relu;
    const auto c = std::size_t(channels);
    scale_ = Parameter{name_ + ".weight", optim::ParamRole::NormScale, c, 0, 1.0f};
    shift_ = Parameter{name_ + ".bias", optim::ParamRole::NormShift, c, 0, 0.0f};
    running_mean_ = StateBuffer{name_ + ".running_mean", c, 0.0f};
    running_var_ = StateBuffer{name_ + ".running_var", c, 1.0f};
}

std::string BatchNorm::name() const {
    return name_ + ": batch norm " + std::to_string(cfg_.channels) +
           (cfg_.fused_relu ? " + relu" : "");
}

void BatchNorm::declare(Declarations& out) {
    out.parameters.push_back(&scale_);
    out.parameters.push_back(&shift_);
    out.buffers.push_back(&running_mean_);
    out.buffers.push_back(&running_var_);
}

Tensor BatchNorm::forward(const Tensor& x, const Context& ctx) {
    auto& cache = ctx.training ? training_kernels_ : eval_kernels_;
    auto& k =
        cache.get(x.shape(), [&] { return ctx.backend.batch_norm(cfg_, x.desc, ctx.training); });
    return k.forward(x, scale_.value, shift_.value, running_mean_.value, running_var_.value);
}

Tensor BatchNorm::backward(const Tensor& dy, const Context& ctx, bool /*want_dx*/) {
    const Tensor dx = training_kernels_.last().backward(dy, scale_.value, scale_.grad, shift_.grad);
    ctx.gradients_written(scale_);  // declared first, so laid out after the shift
    return dx;
}

}  // namespace scalelab::nn
