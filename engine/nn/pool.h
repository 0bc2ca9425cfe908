#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// Max or average pooling; kernel 0 pools the whole image (global average pooling).
class Pool final : public Layer {
  public:
    Pool(std::string name, const PoolConfig& cfg) : name_(std::move(name)), cfg_(cfg) {}
    std::string name() const override;
    Shape output_shape(const Shape& x) const override;
    Tensor forward(const Tensor& x, const Context& ctx) override {
        return kernels_.get(x.shape(), [&] { return ctx.backend.pool(cfg_, x.desc); }).forward(x);
    }
    Tensor backward(const Tensor& dy, const Context&, bool) override {
        return kernels_.last().backward(dy);
    }

  private:
    std::string name_;
    PoolConfig cfg_;
    KernelCache<PoolKernel> kernels_;
};

}  // namespace scalelab::nn
