// Batch normalisation on oneDNN, in whatever layout the input has. oneDNN computes the batch
// mean and (biased) variance; the running statistics are updated here, as PyTorch does:
//   running_mean = (1 - m) running_mean + m mean
//   running_var  = (1 - m) running_var  + m var * n / (n - 1)      (n = N * H * W)

#include "backend/cpu/cpu_kernels.h"

namespace scalelab::cpu {

namespace {

using dnnl::memory;
using dnnl::normalization_flags;
using dnnl::prop_kind;

class CpuBatchNorm final : public BatchNormKernel {
  public:
    CpuBatchNorm(const DnnlContext& ctx, const BatchNormConfig& cfg, const TensorDesc& x,
                 bool training)
        : ctx_(ctx), cfg_(cfg), shape_(x.shape), desc_(x), training_(training) {
        const auto x_md = md_of(x);
        const auto c_md =
            memory::desc({cfg.channels}, memory::data_type::f32, memory::format_tag::x);
        const auto flags =
            normalization_flags::use_scale | normalization_flags::use_shift |
            (training ? normalization_flags::none : normalization_flags::use_global_stats) |
            (cfg.fused_relu ? normalization_flags::fuse_norm_relu : normalization_flags::none);
        const dnnl::batch_normalization_forward::primitive_desc fwd(
            {training ? prop_kind::forward_training : prop_kind::forward_inference, x_md, cfg.eps,
             flags},
            ctx.engine);
        fwd_ = dnnl::batch_normalization_forward(fwd);
        if (training) {
            bwd_ = dnnl::batch_normalization_backward(
                dnnl::batch_normalization_backward::primitive_desc(
                    {prop_kind::backward, x_md, x_md, cfg.eps, flags}, ctx.engine, fwd));
            mean_ = owned(c_md, ctx);
            var_ = owned(c_md, ctx);
            // With a fused ReLU, oneDNN keeps the y > 0 bit mask here for backward.
            if (cfg.fused_relu)
                workspace_ = owned(fwd.workspace_desc(), ctx);
        } else {
            mean_ = borrowed(c_md, ctx);
            var_ = borrowed(c_md, ctx);
        }
        x_ = borrowed(x_md, ctx);
        y_ = owned(x_md, ctx);
        dy_ = borrowed(x_md, ctx);
        dx_ = owned(x_md, ctx);
        scale_ = borrowed(c_md, ctx);
        shift_ = borrowed(c_md, ctx);
        dscale_ = borrowed(c_md, ctx);
        dshift_ = borrowed(c_md, ctx);
    }

    Tensor forward(const Tensor& x, const float* scale, const float* shift, float* running_mean,
                   float* running_var) override {
        point(x_, x.data);
        point(scale_, scale);
        point(shift_, shift);
        if (!training_) {
            point(mean_, running_mean);
            point(var_, running_var);
        }
        Args args{{DNNL_ARG_SRC, x_},       {DNNL_ARG_DST, y_},     {DNNL_ARG_SCALE, scale_},
                  {DNNL_ARG_SHIFT, shift_}, {DNNL_ARG_MEAN, mean_}, {DNNL_ARG_VARIANCE, var_}};
        if (workspace_)
            args.emplace(DNNL_ARG_WORKSPACE, workspace_);
        fwd_.execute(ctx_.stream, args);
        if (training_)
            update_running(running_mean, running_var);
        return view(desc_, y_);
    }

    Tensor backward(const Tensor& dy, const float* scale, float* dscale, float* dshift) override {
        point(dy_, dy.data);
        point(scale_, scale);
        point(dscale_, dscale);
        point(dshift_, dshift);
        Args args{{DNNL_ARG_SRC, x_},
                  {DNNL_ARG_MEAN, mean_},
                  {DNNL_ARG_VARIANCE, var_},
                  {DNNL_ARG_DIFF_DST, dy_},
                  {DNNL_ARG_SCALE, scale_},
                  {DNNL_ARG_SHIFT, shift_},  // 2.6 asks for it; it still points at forward's
                  {DNNL_ARG_DIFF_SRC, dx_},
                  {DNNL_ARG_DIFF_SCALE, dscale_},
                  {DNNL_ARG_DIFF_SHIFT, dshift_}};
        if (workspace_)
            args.emplace(DNNL_ARG_WORKSPACE, workspace_);
        bwd_.execute(ctx_.stream, args);
        return view(desc_, dx_);
    }

  private:
    void update_running(float* running_mean, float* running_var) const {
        const double n = double(shape_.n) * shape_.h * shape_.w;
        const double unbias = n > 1 ? n / (n - 1) : 1.0;
        const float m = cfg_.momentum;
        const float* mean = data_of(mean_);
        const float* var = data_of(var_);
        for (int c = 0; c < cfg_.channels; ++c) {
            running_mean[c] = (1 - m) * running_mean[c] + m * mean[c];
            running_var[c] = float((1 - m) * running_var[c] + m * var[c] * unbias);
        }
    }

    const DnnlContext& ctx_;
    BatchNormConfig cfg_;
    Shape shape_;
    TensorDesc desc_;  // of the input, the output and dx alike
    bool training_;
    dnnl::batch_normalization_forward fwd_;
    dnnl::batch_normalization_backward bwd_;
    memory x_, y_, dy_, dx_, scale_, shift_, dscale_, dshift_, mean_, var_, workspace_;
};

}  // namespace

std::unique_ptr<BatchNormKernel> make_batch_norm(const DnnlContext& ctx, const BatchNormConfig& cfg,
                                                 const TensorDesc& x, bool training) {
    return std::make_unique<CpuBatchNorm>(ctx, cfg, x, training);
}

}  // namespace scalelab::cpu
