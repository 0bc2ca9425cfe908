// Fully connected layer on oneDNN's inner product, all in plain layouts: the input comes from a
// flatten (or another linear layer) and the matrices are small next to the convolutions.

#include "backend/cpu/cpu_kernels.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

using dnnl::memory;
using dnnl::prop_kind;

class CpuLinear final : public LinearKernel {
  public:
    CpuLinear(const DnnlContext& ctx, const LinearConfig& cfg, const TensorDesc& x)
        : ctx_(ctx), x_shape_(x.shape), y_shape_{x.shape.n, cfg.out_features, 1, 1} {
        const auto f32 = memory::data_type::f32;
        const auto x_md = memory::desc({x.shape.n, cfg.in_features}, f32, memory::format_tag::nc);
        const auto w_md =
            memory::desc({cfg.out_features, cfg.in_features}, f32, memory::format_tag::oi);
        const auto b_md = memory::desc({cfg.out_features}, f32, memory::format_tag::x);
        const auto y_md = memory::desc({x.shape.n, cfg.out_features}, f32, memory::format_tag::nc);

        const dnnl::inner_product_forward::primitive_desc fwd(
            {prop_kind::forward_training, x_md, w_md, b_md, y_md}, ctx.engine);
        fwd_ = dnnl::inner_product_forward(fwd);
        bwd_data_ = dnnl::inner_product_backward_data(
            dnnl::inner_product_backward_data::primitive_desc({x_md, w_md, y_md}, ctx.engine, fwd));
        bwd_weights_ = dnnl::inner_product_backward_weights(
            dnnl::inner_product_backward_weights::primitive_desc({x_md, w_md, b_md, y_md},
                                                                 ctx.engine, fwd));
        x_ = borrowed(x_md, ctx);
        w_ = borrowed(w_md, ctx);
        b_ = borrowed(b_md, ctx);
        dw_ = borrowed(w_md, ctx);
        db_ = borrowed(b_md, ctx);
        dy_ = borrowed(y_md, ctx);
        y_ = owned(y_md, ctx);
        dx_ = owned(x_md, ctx);
    }

    Tensor forward(const Tensor& x, const float* weight, const float* bias) override {
        point(x_, x.data);
        point(w_, weight);
        point(b_, bias);
        fwd_.execute(
            ctx_.stream,
            {{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_BIAS, b_}, {DNNL_ARG_DST, y_}});
        return Tensor{TensorDesc{y_shape_, nullptr}, data_of(y_)};
    }

    Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                    bool want_dx) override {
        point(dy_, dy.data);
        point(dw_, dweight);
        point(db_, dbias);
        bwd_weights_.execute(ctx_.stream, {{DNNL_ARG_SRC, x_},
                                           {DNNL_ARG_DIFF_DST, dy_},
                                           {DNNL_ARG_DIFF_WEIGHTS, dw_},
                                           {DNNL_ARG_DIFF_BIAS, db_}});
        if (!want_dx)
            return Tensor{};
        point(w_, weight);
        bwd_data_.execute(
            ctx_.stream,
            {{DNNL_ARG_DIFF_DST, dy_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DIFF_SRC, dx_}});
        return Tensor{TensorDesc{x_shape_, nullptr}, data_of(dx_)};
    }

  private:
    const DnnlContext& ctx_;
    Shape x_shape_, y_shape_;
    dnnl::inner_product_forward fwd_;
    dnnl::inner_product_backward_data bwd_data_;
    dnnl::inner_product_backward_weights bwd_weights_;
    memory x_, w_, b_, y_, dy_, dw_, db_, dx_;
};

}  // namespace

std::unique_ptr<LinearKernel> make_linear(const DnnlContext& ctx, const LinearConfig& cfg,
                                          const TensorDesc& x) {
    if (!x.plain() || int(x.shape.per_sample()) != cfg.in_features)
        throw Error(ErrorKind::Internal, "linear layer expects a plain input of " +
                                             std::to_string(cfg.in_features) + " features, got " +
                                             x.shape.str());
    return std::make_unique<CpuLinear>(ctx, cfg, x);
}

}  // namespace scalelab::cpu
