#include "nn/batch_norm.h"

#include <algorithm>

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
    synced_over_ = ctx.training ? ctx.sync_bn : nullptr;
    if (synced_over_)
        return forward_synchronised(x, ctx);
    auto& cache = ctx.training ? training_kernels_ : eval_kernels_;
    auto& k =
        cache.get(x.shape(), [&] { return ctx.backend.batch_norm(cfg_, x.desc, ctx.training); });
    return k.forward(x, scale_.value, shift_.value, running_mean_.value, running_var_.value);
}

Tensor BatchNorm::backward(const Tensor& dy, const Context& ctx, bool want_dx) {
    if (synced_over_) {
        const Tensor dx = backward_synchronised(dy, want_dx);
        ctx.gradients_written(scale_);
        return dx;
    }
    const Tensor dx = training_kernels_.last().backward(dy, scale_.value, scale_.grad, shift_.grad);
    ctx.gradients_written(scale_);  // declared first, so laid out after the shift
    return dx;
}

// Synchronised batch norm, forward. Each of the R ranks has n_i = N_i * H * W values per
// channel with mean m_i and biased variance v_i; an all-gather of (m_i, v_i, n_i) lets every
// rank combine them, in double and in rank order (so every rank gets the same bits):
//   n = sum_i n_i
//   m = sum_i n_i m_i / n
//   v = sum_i n_i (v_i + m_i^2) / n - m^2  =  sum_i n_i (v_i + (m_i - m)^2) / n
// The second form (Chan et al.'s parallel variance) is the same number without the
// cancellation of the first where m^2 >> v; it is the one computed. The kernel then normalises
// with (m, v) and updates the running statistics with m and the unbiased v n / (n - 1).
// Counts travel as floats: exact up to 2^24 values per channel and device.
Tensor BatchNorm::forward_synchronised(const Tensor& x, const Context& ctx) {
    auto& k =
        sync_kernels_.get(x.shape(), [&] { return ctx.backend.sync_batch_norm(cfg_, x.desc); });
    const auto c = std::size_t(cfg_.channels);
    const auto ranks = std::size_t(synced_over_->size());
    const std::size_t record = 2 * c + 1;  // mean[c], var[c], count
    local_.resize(record);
    gathered_.resize(ranks * record);
    mean_.resize(c);
    var_.resize(c);
    k.local_moments(x, std::span<float>(local_).first(2 * c));
    local_[2 * c] = float(k.local_count());
    synced_over_->all_gather(local_, gathered_);

    double n = 0;
    for (std::size_t r = 0; r < ranks; ++r)
        n += double(gathered_[r * record + 2 * c]);
    for (std::size_t j = 0; j < c; ++j) {
        double sum = 0;
        for (std::size_t r = 0; r < ranks; ++r)
            sum += double(gathered_[r * record + 2 * c]) * double(gathered_[r * record + j]);
        const double m = sum / n;
        double spread = 0;
        for (std::size_t r = 0; r < ranks; ++r) {
            const float* g = gathered_.data() + r * record;
            const double d = double(g[j]) - m;
            spread += double(g[2 * c]) * (double(g[c + j]) + d * d);
        }
        mean_[j] = float(m);
        var_[j] = float(std::max(0.0, spread / n));
    }
    global_count_ = n;
    return k.forward(mean_.data(), var_.data(), n, scale_.value, shift_.value, running_mean_.value,
                     running_var_.value);
}

// Synchronised batch norm, backward: xhat depends on every rank's x through (m, v), so dx needs
// the GLOBAL sums of dy and dy xhat:
//   dx = gamma / sqrt(v + eps) (dy - sum(dy) / n - xhat sum(dy xhat) / n)
// Each rank sums its own part (which is also its dgamma = sum(dy xhat), dbeta = sum(dy): DDP
// averages those like any gradient), then an all-reduce (Sum) of the two sums. Every rank runs
// the same layers in the same order, so the collectives match; the first layer (!want_dx,
// the same on every rank) needs no dx and so no all-reduce.
Tensor BatchNorm::backward_synchronised(const Tensor& dy, bool want_dx) {
    auto& k = sync_kernels_.last();
    sums_.resize(2 * std::size_t(cfg_.channels));
    k.gradient_sums(dy, scale_.grad, shift_.grad, sums_);
    if (!want_dx)
        return Tensor{};
    synced_over_->all_reduce(sums_, comm::ReduceOp::Sum);
    return k.backward(scale_.value, sums_, global_count_);
}

}  // namespace scalelab::nn
