// The residual join y = a + b on oneDNN's binary primitive, in a's layout (b may differ: a 1x1
// shortcut convolution can pick another blocking than the body's last layer).

#include "backend/cpu/cpu_kernels.h"

namespace scalelab::cpu {

namespace {

using dnnl::memory;

class CpuAdd final : public AddKernel {
  public:
    CpuAdd(const DnnlContext& ctx, const TensorDesc& a, const TensorDesc& b) : ctx_(ctx), desc_(a) {
        const auto a_md = md_of(a), b_md = md_of(b);
        add_ = dnnl::binary(dnnl::binary::primitive_desc(
            {dnnl::algorithm::binary_add, a_md, b_md, a_md}, ctx.engine));
        a_ = borrowed(a_md, ctx);
        b_ = borrowed(b_md, ctx);
        y_ = owned(a_md, ctx);
        dy_ = borrowed(a_md, ctx);
        to_b_ = Reorder(a_md, b_md, ctx);
        if (to_b_.needed())
            db_ = owned(b_md, ctx);
        b_desc_ = b;
    }

    Tensor forward(const Tensor& a, const Tensor& b) override {
        point(a_, a.data);
        point(b_, b.data);
        add_.execute(ctx_.stream, {{DNNL_ARG_SRC_0, a_}, {DNNL_ARG_SRC_1, b_}, {DNNL_ARG_DST, y_}});
        return view(desc_, y_);
    }

    Tensor gradient_for_b(const Tensor& dy) override {
        if (!to_b_.needed())
            return Tensor{b_desc_, dy.data};
        point(dy_, dy.data);
        to_b_.run(ctx_, dy_, db_);
        return Tensor{b_desc_, data_of(db_)};
    }

  private:
    const DnnlContext& ctx_;
    TensorDesc desc_;  // of a and of the output
    TensorDesc b_desc_;
    dnnl::binary add_;
    Reorder to_b_;
    memory a_, b_, y_, dy_, db_;
};

}  // namespace

std::unique_ptr<AddKernel> make_add(const DnnlContext& ctx, const TensorDesc& a,
                                    const TensorDesc& b) {
    return std::make_unique<CpuAdd>(ctx, a, b);
}

}  // namespace scalelab::cpu
