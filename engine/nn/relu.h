#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

class Relu final : public Layer {
  public:
    explicit Relu(std::string name) : name_(std::move(name)) {}
    std::string name() const override { return name_ + ": relu"; }
    Shape output_shape(const Shape& x) const override { return x; }
    Tensor forward(const Tensor& x, const Context& ctx) override {
        return kernels_.get(x.shape(), [&] { return ctx.backend.relu(x.desc); }).forward(x);
    }
    Tensor backward(const Tensor& dy, const Context&, bool) override {
        return kernels_.last().backward(dy);
    }

  private:
    std::string name_;
    KernelCache<ReluKernel> kernels_;
};

}  // namespace scalelab::nn
