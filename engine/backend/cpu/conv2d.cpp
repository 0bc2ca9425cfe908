// Convolution on oneDNN: the input keeps the layout the previous layer produced, the output and
// the weights take whatever layout oneDNN's fastest implementation prefers (blocked formats such
// as nChw16c), and the plain OIHW parameters are reordered in and their gradients out.

#include <string_view>

#include "backend/cpu/cpu_kernels.h"

namespace scalelab::cpu {

namespace {

using dnnl::algorithm;
using dnnl::memory;
using dnnl::prop_kind;

// Whether oneDNN chose one of its reference implementations, the loops it keeps for layouts
// and machines no optimised kernel covers.
bool is_reference(const dnnl::primitive_desc_base& pd) {
    return std::string_view(pd.impl_info_str()).starts_with("ref");
}

class CpuConv2d final : public Conv2dKernel {
  public:
    CpuConv2d(const DnnlContext& ctx, const Conv2dConfig& cfg, const TensorDesc& x)
        : ctx_(ctx), cfg_(cfg), x_desc_(x) {
        const int oh = (x.shape.h + 2 * cfg.padding - cfg.kernel) / cfg.stride + 1;
        const int ow = (x.shape.w + 2 * cfg.padding - cfg.kernel) / cfg.stride + 1;
        const Shape y_shape{x.shape.n, cfg.out_channels, oh, ow};
        const memory::dims strides{cfg.stride, cfg.stride}, pad{cfg.padding, cfg.padding};
        const memory::dims wdims{cfg.out_channels, cfg.in_channels, cfg.kernel, cfg.kernel};
        const auto x_md = md_of(x);
        const auto user_w_md =
            memory::desc(wdims, memory::data_type::f32, memory::format_tag::oihw);
        const auto any_w_md = memory::desc(wdims, memory::data_type::f32, memory::format_tag::any);
        const auto b_md = cfg.bias ? memory::desc({cfg.out_channels}, memory::data_type::f32,
                                                  memory::format_tag::x)
                                   : memory::desc();

        const dnnl::convolution_forward::primitive_desc fwd(
            {prop_kind::forward_training, algorithm::convolution_direct, x_md, any_w_md, b_md,
             any_md(y_shape), strides, pad, pad},
            ctx.engine);
        fwd_ = dnnl::convolution_forward(fwd);
        const auto y_md = fwd.dst_desc();
        y_desc_ = desc_of(y_shape, y_md);

        const dnnl::convolution_backward_data::primitive_desc bwd_data(
            {algorithm::convolution_direct, x_md, any_w_md, y_md, strides, pad, pad}, ctx.engine,
            fwd);
        bwd_data_ = dnnl::convolution_backward_data(bwd_data);
        dnnl::convolution_backward_weights::primitive_desc bwd_weights(
            {algorithm::convolution_direct, x_md, any_w_md, b_md, y_md, strides, pad, pad},
            ctx.engine, fwd);
        // oneDNN 2.6 on AVX2 has no JIT kernel for the gradient of weights that read a plain
        // NCHW input against a blocked output gradient (a grey-image model's first layer) and
        // falls back to its reference loops: 320 ms a step for cnn's first layer at batch 32,
        // against 3 ms for its second. There the output gradient is reordered into the layout
        // of oneDNN's best implementation for a free choice, a copy of about 1 ms.
        if (is_reference(bwd_weights)) {
            const dnnl::convolution_backward_weights::primitive_desc free_layout(
                {algorithm::convolution_direct, x_md, any_w_md, b_md, any_md(y_shape), strides, pad,
                 pad},
                ctx.engine, fwd);
            if (!is_reference(free_layout))
                bwd_weights = free_layout;
        }
        bwd_weights_ = dnnl::convolution_backward_weights(bwd_weights);
        dy_in_ = Reorder(y_md, bwd_weights.diff_dst_desc(), ctx);
        if (dy_in_.needed())
            dy_weights_ = owned(bwd_weights.diff_dst_desc(), ctx);

        x_ = borrowed(x_md, ctx);
        y_ = owned(y_md, ctx);
        dy_ = borrowed(y_md, ctx);
        dx_ = owned(x_md, ctx);
        user_w_ = borrowed(user_w_md, ctx);
        user_dw_ = borrowed(user_w_md, ctx);
        if (cfg.bias) {
            b_ = borrowed(b_md, ctx);
            db_ = borrowed(b_md, ctx);
        }
        // Forward and backward-data want the weights blocked differently (backward convolves
        // with the transposed filter), so each gets its own copy, reordered from the plain one.
        w_in_ = Reorder(user_w_md, fwd.weights_desc(), ctx);
        w_ = w_in_.needed() ? owned(fwd.weights_desc(), ctx) : user_w_;
        w_bwd_in_ = Reorder(user_w_md, bwd_data.weights_desc(), ctx);
        w_bwd_ = w_bwd_in_.needed() ? owned(bwd_data.weights_desc(), ctx) : user_w_;
        dw_out_ = Reorder(bwd_weights.diff_weights_desc(), user_w_md, ctx);
        dw_ = dw_out_.needed() ? owned(bwd_weights.diff_weights_desc(), ctx) : user_dw_;
    }

    Tensor forward(const Tensor& x, const float* weight, const float* bias) override {
        point(x_, x.data);
        point(user_w_, weight);
        if (w_in_.needed())
            w_in_.run(ctx_, user_w_, w_);
        Args args{{DNNL_ARG_SRC, x_}, {DNNL_ARG_WEIGHTS, w_}, {DNNL_ARG_DST, y_}};
        if (cfg_.bias) {
            point(b_, bias);
            args.emplace(DNNL_ARG_BIAS, b_);
        }
        fwd_.execute(ctx_.stream, args);
        return view(y_desc_, y_);
    }

    Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                    bool want_dx) override {
        point(dy_, dy.data);
        point(user_dw_, dweight);
        if (dy_in_.needed())
            dy_in_.run(ctx_, dy_, dy_weights_);
        Args args{{DNNL_ARG_SRC, x_},
                  {DNNL_ARG_DIFF_DST, dy_in_.needed() ? dy_weights_ : dy_},
                  {DNNL_ARG_DIFF_WEIGHTS, dw_}};
        if (cfg_.bias) {
            point(db_, dbias);
            args.emplace(DNNL_ARG_DIFF_BIAS, db_);
        }
        bwd_weights_.execute(ctx_.stream, args);
        if (dw_out_.needed())
            dw_out_.run(ctx_, dw_, user_dw_);
        if (!want_dx)
            return Tensor{};
        point(user_w_, weight);
        if (w_bwd_in_.needed())
            w_bwd_in_.run(ctx_, user_w_, w_bwd_);
        bwd_data_.execute(
            ctx_.stream,
            {{DNNL_ARG_DIFF_DST, dy_}, {DNNL_ARG_WEIGHTS, w_bwd_}, {DNNL_ARG_DIFF_SRC, dx_}});
        return view(x_desc_, dx_);
    }

  private:
    const DnnlContext& ctx_;
    Conv2dConfig cfg_;
    TensorDesc x_desc_, y_desc_;
    dnnl::convolution_forward fwd_;
    dnnl::convolution_backward_data bwd_data_;
    dnnl::convolution_backward_weights bwd_weights_;
    Reorder w_in_, w_bwd_in_, dw_out_, dy_in_;
    memory x_, y_, dy_, dy_weights_, dx_, user_w_, w_, w_bwd_, user_dw_, dw_, b_, db_;
};

}  // namespace

std::unique_ptr<Conv2dKernel> make_conv2d(const DnnlContext& ctx, const Conv2dConfig& cfg,
                                          const TensorDesc& x) {
    return std::make_unique<CpuConv2d>(ctx, cfg, x);
}

}  // namespace scalelab::cpu
