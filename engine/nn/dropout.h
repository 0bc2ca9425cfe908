#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// Inverted dropout: active in training only, the identity in evaluation. Each layer mixes its
// own index into the step's seed so that two dropout layers never share a mask.
class Dropout final : public Layer {
  public:
    Dropout(std::string name, float p, std::uint64_t index)
        : name_(std::move(name)), p_(p), index_(index) {}
    std::string name() const override { return name_ + ": dropout " + std::to_string(p_); }
    Shape output_shape(const Shape& x) const override { return x; }
    Tensor forward(const Tensor& x, const Context& ctx) override {
        if (!ctx.training || p_ == 0)
            return x;
        auto& k = kernels_.get(x.shape(), [&] { return ctx.backend.dropout(x.desc); });
        return k.forward(x, p_, ctx.dropout_seed ^ (index_ * 0xD1B54A32D192ED03ull));
    }
    Tensor backward(const Tensor& dy, const Context&, bool) override {
        return p_ == 0 ? dy : kernels_.last().backward(dy);
    }

  private:
    std::string name_;
    float p_;
    std::uint64_t index_;
    KernelCache<DropoutKernel> kernels_;
};

}  // namespace scalelab::nn
