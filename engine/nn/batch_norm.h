#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// Batch normalisation over N, H, W per channel: batch statistics in training (per device, as
// DDP), running statistics in evaluation; optionally with the following ReLU fused in.
class BatchNorm final : public Layer {
  public:
    enum class Activation { None, Relu };
    BatchNorm(std::string name, int channels, Activation activation = Activation::None);
    std::string name() const override;
    Shape output_shape(const Shape& x) const override { return x; }
    void declare(Declarations& out) override;
    Tensor forward(const Tensor& x, const Context& ctx) override;
    Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) override;

  private:
    std::string name_;
    BatchNormConfig cfg_;
    Parameter scale_, shift_;
    StateBuffer running_mean_, running_var_;
    KernelCache<BatchNormKernel> training_kernels_, eval_kernels_;
};

}  // namespace scalelab::nn
