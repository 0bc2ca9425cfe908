// ReLU on oneDNN in the input's layout. Backward uses the saved output (y > 0 exactly where
// x > 0), so the input buffer is free to be reused once forward has run.

#include "backend/cpu/cpu_kernels.h"

namespace scalelab::cpu {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

class CpuRelu final : public ReluKernel {
  public:
    CpuRelu(const DnnlContext& ctx, const TensorDesc& x) : ctx_(ctx), desc_(x) {
        const auto md = md_of(x);
        const dnnl::eltwise_forward::primitive_desc fwd(
            {prop_kind::forward_training, algorithm::eltwise_relu_use_dst_for_bwd, md, 0.f, 0.f},
            ctx.engine);
        fwd_ = dnnl::eltwise_forward(fwd);
        bwd_ = dnnl::eltwise_backward(dnnl::eltwise_backward::primitive_desc(
            {algorithm::eltwise_relu_use_dst_for_bwd, md, md, 0.f, 0.f}, ctx.engine, fwd));
        x_ = borrowed(md, ctx);
        y_ = owned(md, ctx);
        dy_ = borrowed(md, ctx);
        dx_ = owned(md, ctx);
    }

    Tensor forward(const Tensor& x) override {
        point(x_, x.data);
        fwd_.execute(ctx_.stream, {{DNNL_ARG_SRC, x_}, {DNNL_ARG_DST, y_}});
        return view(desc_, y_);
    }

    Tensor backward(const Tensor& dy) override {
        point(dy_, dy.data);
        bwd_.execute(ctx_.stream,
                     {{DNNL_ARG_DST, y_}, {DNNL_ARG_DIFF_DST, dy_}, {DNNL_ARG_DIFF_SRC, dx_}});
        return view(desc_, dx_);
    }

  private:
    const DnnlContext& ctx_;
    TensorDesc desc_;  // of the input, the output and dx alike
    dnnl::eltwise_forward fwd_;
    dnnl::eltwise_backward bwd_;
    memory x_, y_, dy_, dx_;
};

}  // namespace

std::unique_ptr<ReluKernel> make_relu(const DnnlContext& ctx, const TensorDesc& x) {
    return std::make_unique<CpuRelu>(ctx, x);
}

}  // namespace scalelab::cpu
