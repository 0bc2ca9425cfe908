#include "nn/batch_norm.h"

#include <algorithm>

#include "error.h"

namespace scalelab::nn {

BatchNorm::BatchNorm(std::string name, int channels, Activation activation)
    : BatchNorm(std::move(name), channels,
                BatchNormOptions{.fused_relu = activation == Activation::Relu}) {}

BatchNorm::BatchNorm(std::string name, int channels, const BatchNormOptions& options)
    : name_(std::move(name)), ghost_batch_(options.ghost_batch) {
    if (options.ghost_batch < 0)
        throw Error(ErrorKind::InvalidSpec, name_ + ": ghost_batch must be 0 (off) or positive");
    cfg_.channels = channels;
    cfg_.fused_relu = options.fused_relu;
    const auto c = std::size_t(channels);
    scale_ = Parameter{.name = name_ + ".weight",
                       .role = optim::ParamRole::NormScale,
                       .size = c,
                       .init_bound = 0,
                       .init_value = options.initial_scale,
                       .shape = {channels}};
    shift_ = Parameter{.name = name_ + ".bias",
                       .role = optim::ParamRole::NormShift,
                       .size = c,
                       .init_bound = 0,
                       .init_value = 0.0f,
                       .shape = {channels}};
    running_mean_ = StateBuffer{
        .name = name_ + ".running_mean", .size = c, .init_value = 0.0f, .shape = {channels}};
    running_var_ = StateBuffer{
        .name = name_ + ".running_var", .size = c, .init_value = 1.0f, .shape = {channels}};
}

std::string BatchNorm::name() const {
    return name_ + ": batch norm " + std::to_string(cfg_.channels) +
           (cfg_.fused_relu ? " + relu" : "") +
           (ghost_batch_ > 0 ? ", ghost batch " + std::to_string(ghost_batch_) : "");
}

void BatchNorm::declare(Declarations& out) {
    out.parameters.push_back(&scale_);
    out.parameters.push_back(&shift_);
    out.buffers.push_back(&running_mean_);
    out.buffers.push_back(&running_var_);
}

Tensor BatchNorm::forward(const Tensor& x, const Context& ctx) {
    if (ghost_batch_ > 0 && ctx.sync_bn != nullptr)
        throw Error(ErrorKind::InvalidSpec,
                    "ghost_batch and sync_bn cannot be combined: choose one (" + name_ + ")");
    synced_over_ = ctx.training ? ctx.sync_bn : nullptr;
    if (synced_over_)
        return forward_synchronised(x, ctx);
    const int n = x.shape().n;
    ghosted_ = ctx.training && ghost_batch_ > 0 && n > ghost_batch_ && n % ghost_batch_ == 0;
    if (ghosted_)
        return forward_ghost(x, ctx);
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
    if (ghosted_)
        return backward_ghost(dy, ctx, want_dx);
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

// Ghost batch norm (Hoffer et al. 2017), training with a per-device batch of n = k g samples:
// the batch is cut into k virtual batches of g consecutive samples, and each is normalised
// with its own mean and variance, exactly as k separate batch norms sharing gamma and beta:
//   y[slice i]  = BN_i(x[slice i])
//   dx[slice i] = BN_i'(dy[slice i])             (each slice's dx uses its own statistics)
//   dgamma = sum_i dgamma_i, dbeta = sum_i dbeta_i
// The running statistics are updated once per slice, in slice order (as the common PyTorch
// ghost-BN modules do: F.batch_norm per chunk on the same buffers), so one step moves them by
// 1 - (1 - momentum)^k rather than momentum. A batch that does not split evenly (n <= g, or
// n not a multiple of g: the last, partial batch of an epoch) takes the ordinary path, with
// statistics over all its n samples. Evaluation is unchanged.
//
// Layers see layouts as opaque (layer.h), so the layer cannot cut a slice out of a blocked
// tensor itself: the input goes through the backend's reorder to plain NCHW, where the batch
// is the outermost dimension and slice i is the contiguous range [i g, (i + 1) g) x C x H x W,
// and the output goes back to x's layout (the neighbours see the layout they always see).
// Where x is already plain the reorders are no-ops. Each slice's y and dx are copied into the
// full-size buffers, and its scale and shift gradients added up, in the backend's memory
// (Backend::copy and add_to: on a GPU, nothing goes through the host or waits for it).
Tensor BatchNorm::forward_ghost(const Tensor& x, const Context& ctx) {
    const Shape full = x.shape();
    const int k = full.n / ghost_batch_;
    const Shape slice{ghost_batch_, full.c, full.h, full.w};
    const std::size_t slice_floats = slice.numel();
    auto& plan = ghost_plans_.get(full, [&] {
        auto p = std::make_unique<GhostPlan>();
        p->input = ctx.backend.to_plain(x.desc);
        p->output = ctx.backend.to_plain(x.desc);
        const TensorDesc slice_desc{slice, nullptr};
        for (int i = 0; i < k; ++i)
            p->slices.push_back(ctx.backend.batch_norm(cfg_, slice_desc, true));
        p->y = ctx.backend.allocate(full.numel());
        p->dx = ctx.backend.allocate(full.numel());
        p->dscale = ctx.backend.allocate(std::size_t(cfg_.channels));
        p->dshift = ctx.backend.allocate(std::size_t(cfg_.channels));
        return p;
    });
    const Tensor plain = plan.input->forward(x);
    if (!plain.desc.plain() || plain.shape() != full)
        throw Error(ErrorKind::Internal,
                    name_ + ": ghost batch norm needs the input in plain NCHW, got " +
                        (plain.desc.layout ? plain.desc.layout->name() : std::string("plain")) +
                        " " + plain.shape().str());
    for (int i = 0; i < k; ++i) {
        const std::size_t offset = std::size_t(i) * slice_floats;
        const Tensor y = plan.slices[std::size_t(i)]->forward(
            Tensor{TensorDesc{slice, nullptr}, plain.data + offset}, scale_.value, shift_.value,
            running_mean_.value, running_var_.value);
        ctx.backend.copy({y.data, slice_floats}, {plan.y.data() + offset, slice_floats});
    }
    return plan.output->backward(Tensor{TensorDesc{full, nullptr}, plan.y.data()});
}

Tensor BatchNorm::backward_ghost(const Tensor& dy, const Context& ctx, bool want_dx) {
    auto& plan = ghost_plans_.last();
    const Shape full = dy.shape();
    const Shape slice{ghost_batch_, full.c, full.h, full.w};
    const std::size_t slice_floats = slice.numel();
    const Tensor plain_dy = plan.output->forward(dy);
    const std::span<float> dscale{scale_.grad, scale_.size}, dshift{shift_.grad, shift_.size};
    for (std::size_t i = 0; i < plan.slices.size(); ++i) {
        const std::size_t offset = i * slice_floats;
        const Tensor dx =
            plan.slices[i]->backward(Tensor{TensorDesc{slice, nullptr}, plain_dy.data + offset},
                                     scale_.value, plan.dscale.data(), plan.dshift.data());
        // The parameters' gradients are the sums over the slices, added in slice order.
        if (i == 0) {
            ctx.backend.copy(plan.dscale.span(), dscale);
            ctx.backend.copy(plan.dshift.span(), dshift);
        } else {
            ctx.backend.add_to(plan.dscale.span(), dscale);
            ctx.backend.add_to(plan.dshift.span(), dshift);
        }
        if (want_dx)
            ctx.backend.copy({dx.data, slice_floats}, {plan.dx.data() + offset, slice_floats});
    }
    ctx.gradients_written(scale_);  // declared first, so laid out after the shift
    if (!want_dx)
        return Tensor{};
    return plan.input->backward(Tensor{TensorDesc{full, nullptr}, plan.dx.data()});
}

}  // namespace scalelab::nn
