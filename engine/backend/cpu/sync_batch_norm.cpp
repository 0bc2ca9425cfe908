// Synchronised batch norm on the CPU (see SyncBatchNormKernel for the formulas): the statistics
// come from the layer, which combines every device's. oneDNN normalises with the given
// statistics (use_global_stats: the same primitive as inference, with the ReLU fused); the
// moments, the gradient sums and the dx correction are plain loops, because oneDNN computes
// them only over the local batch and only inside one fused primitive.
//
// The loops see the activation's physical layout, one of
//   nchw      plane (n, c):   H * W floats, all of channel c
//   nChw8c    plane (n, cb):  H * W * 8 floats, channel cb * 8 + (offset % 8)
//   nChw16c   plane (n, cb):  H * W * 16 floats, channel cb * 16 + (offset % 16)
// (the blocked ones are what oneDNN's convolutions pick; any other layout is an Internal error,
// named). A blocked layout pads the channels up to a multiple of the block: those lanes hold
// zeros, are left out of every sum and stay zero in dx. Each loop runs in parallel over the
// planes; per-plane partial sums (in double) are then added over n in a fixed order, so the
// results do not depend on the thread count.

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

using dnnl::memory;
using dnnl::normalization_flags;
using dnnl::prop_kind;

// Sums two quantities per lane of every plane: out[p * 2B + l] and out[p * 2B + B + l] for lane
// l of plane p. f(plane, i, l, a, b) adds element i of lane l to a and b.
template <int B, class F>
void plane_sums(std::int64_t planes, std::int64_t hw, double* out, F&& f) {
#pragma omp parallel for schedule(static)
    for (std::int64_t p = 0; p < planes; ++p) {
        double a[B] = {}, b[B] = {};
        for (std::int64_t i = 0; i < hw; ++i)
            for (int l = 0; l < B; ++l)
                f(p, i, l, a[l], b[l]);
        for (int l = 0; l < B; ++l) {
            out[p * 2 * B + l] = a[l];
            out[p * 2 * B + B + l] = b[l];
        }
    }
}

// A layout as the error message names it: its blocks and its strides (NCHW order), since
// "blocked" alone does not tell nhwc from nchw.
std::string layout_name(const TensorDesc& x) {
    const auto md = md_of(x);
    std::string strides;
    for (int i = 0; i < md.data.ndims; ++i)
        strides += (i ? "," : "") + std::to_string(md.data.format_desc.blocking.strides[i]);
    return (x.plain() ? std::string("nchw") : x.layout->name()) + " (strides " + strides + ")";
}

class CpuSyncBatchNorm final : public SyncBatchNormKernel {
  public:
    CpuSyncBatchNorm(const DnnlContext& ctx, const BatchNormConfig& cfg, const TensorDesc& x)
        : ctx_(ctx), cfg_(cfg), shape_(x.shape), desc_(x) {
        const auto x_md = md_of(x);
        const auto dims = dims_of(shape_);
        using tag = memory::format_tag;
        if (x_md == memory::desc(dims, memory::data_type::f32, tag::nchw))
            block_ = 1;
        else if (x_md == memory::desc(dims, memory::data_type::f32, tag::nChw8c))
            block_ = 8;
        else if (x_md == memory::desc(dims, memory::data_type::f32, tag::nChw16c))
            block_ = 16;
        else
            throw Error(ErrorKind::Internal,
                        "synchronised batch norm does not support the layout " + layout_name(x) +
                            " of a " + shape_.str() + " input (only nchw, nChw8c and nChw16c)");
        blocks_ = (cfg.channels + block_ - 1) / block_;
        planes_ = std::int64_t(shape_.n) * blocks_;
        hw_ = std::int64_t(shape_.h) * shape_.w;

        const auto c_md =
            memory::desc({cfg.channels}, memory::data_type::f32, memory::format_tag::x);
        const auto flags =
            normalization_flags::use_scale | normalization_flags::use_shift |
            normalization_flags::use_global_stats |
            (cfg.fused_relu ? normalization_flags::fuse_norm_relu : normalization_flags::none);
        fwd_ = dnnl::batch_normalization_forward(dnnl::batch_normalization_forward::primitive_desc(
            {prop_kind::forward_inference, x_md, cfg.eps, flags}, ctx.engine));
        x_ = borrowed(x_md, ctx);
        y_ = owned(x_md, ctx);
        dx_ = owned(x_md, ctx);
        mean_ = owned(c_md, ctx);
        var_ = owned(c_md, ctx);
        scale_ = borrowed(c_md, ctx);
        shift_ = borrowed(c_md, ctx);
        // Allocated once: no allocation per step (see DESIGN.md on freed blocks).
        partial_.resize(std::size_t(planes_) * 2 * std::size_t(block_));
        lane_mean_.assign(std::size_t(blocks_) * std::size_t(block_), 0.0);
        lane_inv_std_.assign(lane_mean_.size(), 0.0);
        coef_.assign(3 * lane_mean_.size(), 0.0f);
    }

    double local_count() const override { return double(shape_.n) * double(hw_); }

    void local_moments(const Tensor& x, std::span<float> mean_var) override {
        x_data_ = x.data;
        const float* src = x.data;
        const std::int64_t plane = hw_ * block_;
        dispatch([&]<int B>() {
            plane_sums<B>(planes_, hw_, partial_.data(),
                          [=](std::int64_t p, std::int64_t i, int l, double& s, double& q) {
                              const double v = src[p * plane + i * B + l];
                              s += v;
                              q += v * v;
                          });
        });
        // mean = sum x / n,  var = sum x^2 / n - mean^2 (biased; in double, so the
        // cancellation costs nothing at float precision).
        const double n = local_count();
        for_channels([&](int c, double s, double q) {
            const double mean = s / n;
            mean_var[std::size_t(c)] = float(mean);
            mean_var[std::size_t(cfg_.channels + c)] = float(std::max(0.0, q / n - mean * mean));
        });
    }

    Tensor forward(const float* mean, const float* var, double n, const float* scale,
                   const float* shift, float* running_mean, float* running_var) override {
        std::copy(mean, mean + cfg_.channels, data_of(mean_));
        std::copy(var, var + cfg_.channels, data_of(var_));
        for (int c = 0; c < cfg_.channels; ++c) {
            lane_mean_[std::size_t(c)] = mean[c];
            lane_inv_std_[std::size_t(c)] = 1.0 / std::sqrt(double(var[c]) + double(cfg_.eps));
        }
        point(x_, x_data_);
        point(scale_, scale);
        point(shift_, shift);
        fwd_.execute(ctx_.stream, {{DNNL_ARG_SRC, x_},
                                   {DNNL_ARG_DST, y_},
                                   {DNNL_ARG_SCALE, scale_},
                                   {DNNL_ARG_SHIFT, shift_},
                                   {DNNL_ARG_MEAN, mean_},
                                   {DNNL_ARG_VARIANCE, var_}});
        // PyTorch's update, with the global unbiased variance var * n / (n - 1).
        const double unbias = n > 1 ? n / (n - 1) : 1.0;
        const float m = cfg_.momentum;
        for (int c = 0; c < cfg_.channels; ++c) {
            running_mean[c] = (1 - m) * running_mean[c] + m * mean[c];
            running_var[c] = float((1 - m) * running_var[c] + m * double(var[c]) * unbias);
        }
        return view(desc_, y_);
    }

    void gradient_sums(const Tensor& dy, float* dscale, float* dshift,
                       std::span<float> sums) override {
        dy_data_ = dy.data;
        const float* x = x_data_;
        const float* y = data_of(y_);
        const float* g = dy.data;
        const double* mean = lane_mean_.data();
        const double* inv_std = lane_inv_std_.data();
        const std::int64_t plane = hw_ * block_;
        const std::int64_t blocks = blocks_;
        const bool relu = cfg_.fused_relu;
        dispatch([&]<int B>() {
            plane_sums<B>(planes_, hw_, partial_.data(),
                          [=](std::int64_t p, std::int64_t i, int l, double& s, double& t) {
                              const std::int64_t at = p * plane + i * B + l;
                              // The fused ReLU passes no gradient where it output 0.
                              const double d = relu && y[at] == 0.0f ? 0.0 : double(g[at]);
                              const std::size_t c = std::size_t((p % blocks) * B + l);
                              s += d;
                              t += d * (double(x[at]) - mean[c]) * inv_std[c];
                          });
        });
        for_channels([&](int c, double s, double t) {
            sums[std::size_t(c)] = float(s);
            sums[std::size_t(cfg_.channels + c)] = float(t);
            dshift[c] = float(s);
            dscale[c] = float(t);
        });
    }

    Tensor backward(const float* scale, std::span<const float> global_sums, double n) override {
        // dx = gamma / sigma (dy - sum(dy) / n - xhat sum(dy xhat) / n), per channel:
        //   dx = k (dy - a - xhat b),  k = gamma / sigma, a = sum(dy) / n, b = sum(dy xhat) / n.
        // Padded lanes get k = a = b = 0 (and their dy is 0), so they stay zero.
        const std::size_t lanes = lane_mean_.size();
        for (int c = 0; c < cfg_.channels; ++c) {
            const auto u = std::size_t(c);
            coef_[u] = float(double(scale[c]) * lane_inv_std_[u]);
            coef_[lanes + u] = float(double(global_sums[u]) / n);
            coef_[2 * lanes + u] = float(double(global_sums[std::size_t(cfg_.channels + c)]) / n);
        }
        const float* x = x_data_;
        const float* y = data_of(y_);
        const float* g = dy_data_;
        float* dx = data_of(dx_);
        const double* mean = lane_mean_.data();
        const double* inv_std = lane_inv_std_.data();
        const float* k = coef_.data();
        const float* a = k + lanes;
        const float* b = a + lanes;
        const std::int64_t plane = hw_ * block_;
        const std::int64_t planes = planes_;
        const std::int64_t hw = hw_;
        const std::int64_t blocks = blocks_;
        const bool relu = cfg_.fused_relu;
        dispatch([&]<int B>() {
#pragma omp parallel for schedule(static)
            for (std::int64_t p = 0; p < planes; ++p) {
                const std::size_t c0 = std::size_t((p % blocks) * B);
                for (std::int64_t i = 0; i < hw; ++i)
                    for (int l = 0; l < B; ++l) {
                        const std::int64_t at = p * plane + i * B + l;
                        const std::size_t c = c0 + std::size_t(l);
                        const float d = relu && y[at] == 0.0f ? 0.0f : g[at];
                        const float xhat = float((double(x[at]) - mean[c]) * inv_std[c]);
                        dx[at] = k[c] * (d - a[c] - xhat * b[c]);
                    }
            }
        });
        return view(desc_, dx_);
    }

  private:
    // Runs f.template operator()<B>() with the layout's block as a compile-time constant, so
    // the lane loops unroll and vectorise.
    template <class F>
    void dispatch(F&& f) const {
        if (block_ == 16)
            f.template operator()<16>();
        else if (block_ == 8)
            f.template operator()<8>();
        else
            f.template operator()<1>();
    }

    // f(c, a, b) with channel c's two sums of partial_ added over n (in order of n).
    template <class F>
    void for_channels(F&& f) const {
        for (int c = 0; c < cfg_.channels; ++c) {
            const std::int64_t cb = c / block_, l = c % block_;
            double a = 0, b = 0;
            for (std::int64_t n = 0; n < shape_.n; ++n) {
                const double* part = partial_.data() + (n * blocks_ + cb) * 2 * block_;
                a += part[l];
                b += part[block_ + l];
            }
            f(c, a, b);
        }
    }

    const DnnlContext& ctx_;
    BatchNormConfig cfg_;
    Shape shape_;
    TensorDesc desc_;          // of the input, the output and dx alike
    int block_ = 1;            // channels per block of the layout (1: plain nchw)
    std::int64_t blocks_ = 0;  // ceil(channels / block_)
    std::int64_t planes_ = 0;  // n * blocks_
    std::int64_t hw_ = 0;
    dnnl::batch_normalization_forward fwd_;
    memory x_, y_, dx_, mean_, var_, scale_, shift_;
    const float* x_data_ = nullptr;   // of local_moments, for forward and backward
    const float* dy_data_ = nullptr;  // of gradient_sums, for backward
    std::vector<double> partial_;     // per plane: block_ first sums, then block_ second sums
    std::vector<double> lane_mean_, lane_inv_std_;  // per padded channel; padding: 0
    std::vector<float> coef_;                       // backward's k, a, b per padded channel
};

}  // namespace

std::unique_ptr<SyncBatchNormKernel> make_sync_batch_norm(const DnnlContext& ctx,
                                                          const BatchNormConfig& cfg,
                                                          const TensorDesc& x) {
    return std::make_unique<CpuSyncBatchNorm>(ctx, cfg, x);
}

}  // namespace scalelab::cpu
