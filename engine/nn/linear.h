#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// Fully connected: y = x W^T + b on a flat (n, features) input.
class Linear final : public Layer {
  public:
    Linear(std::string name, const LinearConfig& cfg);
    std::string name() const override;
    Shape output_shape(const Shape& x) const override {
        return Shape{x.n, cfg_.out_features, 1, 1};
    }
    double forward_flops(const Shape&) const override {
        return 2.0 * cfg_.in_features * cfg_.out_features;
    }
    void declare(Declarations& out) override;
    Tensor forward(const Tensor& x, const Context& ctx) override;
    Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) override;

  private:
    std::string name_;
    LinearConfig cfg_;
    Parameter weight_, bias_;
    KernelCache<LinearKernel> kernels_;
};

}  // namespace scalelab::nn
