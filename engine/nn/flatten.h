#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// (n, c, h, w) -> (n, c*h*w, 1, 1) in plain layout, in PyTorch's C-then-H-then-W order, so that
// a following linear layer sees exactly the features PyTorch's Flatten gives.
class Flatten final : public Layer {
  public:
    explicit Flatten(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_ + ": flatten"; }
    Shape output_shape(const Shape& x) const override {
        return Shape{x.n, int(x.per_sample()), 1, 1};
    }
    Tensor forward(const Tensor& x, const Context& ctx) override {
        auto& k = kernels_.get(x.shape(), [&] { return ctx.backend.to_plain(x.desc); });
        in_shape_ = x.shape();
        const Tensor plain = k.forward(x);
        return Tensor{TensorDesc{output_shape(x.shape()), nullptr}, plain.data};
    }
    Tensor backward(const Tensor& dy, const Context&, bool) override {
        return kernels_.last().backward(Tensor{TensorDesc{in_shape_, nullptr}, dy.data});
    }

  private:
    std::string name_;
    Shape in_shape_;
    KernelCache<ReorderKernel> kernels_;
};

}  // namespace scalelab::nn
