#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// 2-D convolution, with or without bias.
class Conv2d final : public Layer {
  public:
    Conv2d(std::string name, const Conv2dConfig& cfg);
    std::string name() const override;
    Shape output_shape(const Shape& x) const override;
    double forward_flops(const Shape& x) const override;
    void declare(Declarations& out) override;
    Tensor forward(const Tensor& x, const Context& ctx) override;
    Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) override;

  private:
    std::string name_;
    Conv2dConfig cfg_;
    Parameter weight_, bias_;
    KernelCache<Conv2dKernel> kernels_;
};

}  // namespace scalelab::nn
