// Converts a blocked activation to plain NCHW (before flatten) and its gradient back.

#include "backend/cpu/cpu_kernels.h"

namespace scalelab::cpu {

namespace {

class CpuToPlain final : public ReorderKernel {
  public:
    CpuToPlain(const DnnlContext& ctx, const TensorDesc& x)
        : ctx_(ctx),
          x_desc_(x),
          forward_(md_of(x), plain_md(x.shape), ctx),
          backward_(plain_md(x.shape), md_of(x), ctx),
          x_(borrowed(md_of(x), ctx)),
          // A plain input passes through both ways: no buffers to hold.
          y_(x.plain() ? dnnl::memory() : owned(plain_md(x.shape), ctx)),
          dy_(borrowed(plain_md(x.shape), ctx)),
          dx_(x.plain() ? dnnl::memory() : owned(md_of(x), ctx)) {}

    Tensor forward(const Tensor& x) override {
        if (!forward_.needed())
            return x;
        point(x_, x.data);
        forward_.run(ctx_, x_, y_);
        return Tensor{TensorDesc{x_desc_.shape, nullptr}, data_of(y_)};
    }

    Tensor backward(const Tensor& dy) override {
        if (!backward_.needed())
            return dy;
        point(dy_, dy.data);
        backward_.run(ctx_, dy_, dx_);
        return Tensor{x_desc_, data_of(dx_)};
    }

  private:
    const DnnlContext& ctx_;
    TensorDesc x_desc_;
    Reorder forward_, backward_;
    dnnl::memory x_, y_, dy_, dx_;
};

}  // namespace

std::unique_ptr<ReorderKernel> make_to_plain(const DnnlContext& ctx, const TensorDesc& x) {
    return std::make_unique<CpuToPlain>(ctx, x);
}

}  // namespace scalelab::cpu
