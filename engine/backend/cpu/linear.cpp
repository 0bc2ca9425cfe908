// Fully connected layer on oneDNN's matmul, in plain row-major layouts: the input comes from a
// flatten (or another linear layer) and the matrices are small next to the convolutions. With W
// stored (out, in), as PyTorch stores it, a step is four matrix products:
//
//   forward           y  = x  · Wᵀ + b    (n, in)  · (in, out)
//   backward data     dx = dy · W         (n, out) · (out, in)
//   backward weights  dW = dyᵀ · x        (out, n) · (n, in)
//   backward bias     db = 1ᵀ · dy        (1, n)   · (n, out)
//
// Wᵀ and dyᵀ are W's and dy's own memory read column-major (format tag `ba`): nothing is copied.
//
// Why matmul and not oneDNN's inner product: in oneDNN 2.6 the inner product runs on its sgemm,
// which from a batch of 16 on packs its operands into buffers it mallocs on every call. glibc
// maps a block of 128 KiB or more afresh each time (allocator_policy.h) and the packing then
// faults every page of it in: the mlp trained at 20,000 images/s at batch 16 against 64,000 at
// batch 15. The matmul (brgemm) kernels take their buffers from the primitive's scratchpad,
// made once with the primitive, so a step allocates nothing.

#include <algorithm>

#include "backend/cpu/cpu_kernels.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

using dnnl::memory;

memory::desc matrix(memory::dim rows, memory::dim cols, memory::format_tag order) {
    return memory::desc({rows, cols}, memory::data_type::f32, order);
}

// One product C = A · B (+ bias, a 1 x cols row added to every row of C).
class MatrixProduct {
  public:
    MatrixProduct() = default;
    MatrixProduct(const DnnlContext& ctx, const memory::desc& a, const memory::desc& b,
                  const memory::desc& c, const memory::desc& bias = {})
        : prim_(dnnl::matmul::primitive_desc({a, b, bias, c}, ctx.engine)) {}

    void run(const DnnlContext& ctx, const memory& a, const memory& b, const memory& c) const {
        prim_.execute(ctx.stream, {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_DST, c}});
    }
    void run(const DnnlContext& ctx, const memory& a, const memory& b, const memory& bias,
             const memory& c) const {
        prim_.execute(
            ctx.stream,
            {{DNNL_ARG_SRC, a}, {DNNL_ARG_WEIGHTS, b}, {DNNL_ARG_BIAS, bias}, {DNNL_ARG_DST, c}});
    }

  private:
    dnnl::matmul prim_;
};

class CpuLinear final : public LinearKernel {
  public:
    CpuLinear(const DnnlContext& ctx, const LinearConfig& cfg, const TensorDesc& x)
        : ctx_(ctx), x_shape_(x.shape), y_shape_{x.shape.n, cfg.out_features, 1, 1} {
        using tag = memory::format_tag;
        const memory::dim n = x.shape.n, in = cfg.in_features, out = cfg.out_features;
        const auto x_md = matrix(n, in, tag::ab);
        const auto y_md = matrix(n, out, tag::ab);
        const auto w_md = matrix(out, in, tag::ab);
        const auto wt_md = matrix(in, out, tag::ba);   // W read as Wᵀ
        const auto dyt_md = matrix(out, n, tag::ba);   // dy read as dyᵀ
        const auto bias_md = matrix(1, out, tag::ab);  // b, and db
        const auto ones_md = matrix(1, n, tag::ab);

        forward_ = MatrixProduct(ctx, x_md, wt_md, y_md, bias_md);
        backward_data_ = MatrixProduct(ctx, y_md, w_md, x_md);
        backward_weights_ = MatrixProduct(ctx, dyt_md, x_md, w_md);
        backward_bias_ = MatrixProduct(ctx, ones_md, y_md, bias_md);

        x_ = borrowed(x_md, ctx);
        w_ = borrowed(w_md, ctx);
        wt_ = borrowed(wt_md, ctx);
        b_ = borrowed(bias_md, ctx);
        dy_ = borrowed(y_md, ctx);
        dyt_ = borrowed(dyt_md, ctx);
        dw_ = borrowed(w_md, ctx);
        db_ = borrowed(bias_md, ctx);
        y_ = owned(y_md, ctx);
        dx_ = owned(x_md, ctx);
        ones_ = owned(ones_md, ctx);
        std::fill_n(data_of(ones_), n, 1.0f);
    }

    Tensor forward(const Tensor& x, const float* weight, const float* bias) override {
        point(x_, x.data);
        point(wt_, weight);
        point(b_, bias);
        forward_.run(ctx_, x_, wt_, b_, y_);
        return Tensor{TensorDesc{y_shape_, nullptr}, data_of(y_)};
    }

    Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                    bool want_dx) override {
        point(dy_, dy.data);
        point(dyt_, dy.data);
        point(dw_, dweight);
        point(db_, dbias);
        backward_weights_.run(ctx_, dyt_, x_, dw_);
        backward_bias_.run(ctx_, ones_, dy_, db_);
        if (!want_dx)
            return Tensor{};
        point(w_, weight);
        backward_data_.run(ctx_, dy_, w_, dx_);
        return Tensor{TensorDesc{x_shape_, nullptr}, data_of(dx_)};
    }

  private:
    const DnnlContext& ctx_;
    Shape x_shape_, y_shape_;
    MatrixProduct forward_, backward_data_, backward_weights_, backward_bias_;
    memory x_, w_, wt_, b_, dy_, dyt_, dw_, db_, y_, dx_, ones_;
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
