// Max and average pooling on oneDNN in the input's layout. Max pooling keeps oneDNN's workspace
// (the arg-max positions) from forward for backward. Average pooling counts the zero padding in
// the divisor, as PyTorch's AvgPool2d does by default; global pooling has no padding.

#include "backend/cpu/cpu_kernels.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

class CpuPool final : public PoolKernel {
  public:
    CpuPool(const DnnlContext& ctx, const PoolConfig& cfg, const TensorDesc& x)
        : ctx_(ctx), x_desc_(x) {
        const int kh = cfg.kernel == 0 ? x.shape.h : cfg.kernel;
        const int kw = cfg.kernel == 0 ? x.shape.w : cfg.kernel;
        const int sh = cfg.kernel == 0 ? 1 : cfg.stride;
        const int sw = sh;
        const int p = cfg.kernel == 0 ? 0 : cfg.padding;
        const Shape y_shape{x.shape.n, x.shape.c, (x.shape.h + 2 * p - kh) / sh + 1,
                            (x.shape.w + 2 * p - kw) / sw + 1};
        const auto alg = cfg.kind == PoolKind::Max ? algorithm::pooling_max
                                                   : algorithm::pooling_avg_include_padding;
        const memory::dims strides{sh, sw}, kernel{kh, kw}, pad{p, p};
        const auto x_md = md_of(x);
        const dnnl::pooling_forward::primitive_desc fwd(
            {prop_kind::forward_training, alg, x_md, any_md(y_shape), strides, kernel, pad, pad},
            ctx.engine);
        fwd_ = dnnl::pooling_forward(fwd);
        const auto y_md = fwd.dst_desc();
        y_desc_ = desc_of(y_shape, y_md);
        bwd_ = dnnl::pooling_backward(dnnl::pooling_backward::primitive_desc(
            {alg, x_md, y_md, strides, kernel, pad, pad}, ctx.engine, fwd));
        x_ = borrowed(x_md, ctx);
        y_ = owned(y_md, ctx);
        dy_ = borrowed(y_md, ctx);
        dx_ = owned(x_md, ctx);
        if (cfg.kind == PoolKind::Max)
            workspace_ = owned(fwd.workspace_desc(), ctx);
    }

    Tensor forward(const Tensor& x) override {
        point(x_, x.data);
        Args args{{DNNL_ARG_SRC, x_}, {DNNL_ARG_DST, y_}};
        if (workspace_)
            args.emplace(DNNL_ARG_WORKSPACE, workspace_);
        fwd_.execute(ctx_.stream, args);
        return view(y_desc_, y_);
    }

    Tensor backward(const Tensor& dy) override {
        point(dy_, dy.data);
        Args args{{DNNL_ARG_DIFF_DST, dy_}, {DNNL_ARG_DIFF_SRC, dx_}};
        if (workspace_)
            args.emplace(DNNL_ARG_WORKSPACE, workspace_);
        bwd_.execute(ctx_.stream, args);
        return view(x_desc_, dx_);
    }

  private:
    const DnnlContext& ctx_;
    TensorDesc x_desc_, y_desc_;
    dnnl::pooling_forward fwd_;
    dnnl::pooling_backward bwd_;
    memory x_, y_, dy_, dx_, workspace_;
};

}  // namespace

std::unique_ptr<PoolKernel> make_pool(const DnnlContext& ctx, const PoolConfig& cfg,
                                      const TensorDesc& x) {
    if (cfg.kernel != 0 &&
        (x.shape.h + 2 * cfg.padding < cfg.kernel || x.shape.w + 2 * cfg.padding < cfg.kernel))
        throw Error(ErrorKind::InvalidSpec, "pooling window " + std::to_string(cfg.kernel) +
                                                " is larger than its input " + x.shape.str() +
                                                ": use larger images or a smaller model");
    return std::make_unique<CpuPool>(ctx, cfg, x);
}

}  // namespace scalelab::cpu
