#pragma once

#include <memory>

#include "nn/sequential.h"

namespace scalelab::nn {

// y = body(x) + shortcut(x), where the shortcut is the identity or a projection (1x1 conv,
// optionally with batch norm) when the shape changes. Backward sends dy down both branches and
// adds the two input gradients.
class Residual final : public Layer {
  public:
    Residual(std::string name, std::unique_ptr<Sequential> body,
             std::unique_ptr<Sequential> shortcut /* null: identity */);
    std::string name() const override { return name_; }
    Shape output_shape(const Shape& x) const override { return body_->output_shape(x); }
    double forward_flops(const Shape& x) const override;
    void declare(Declarations& out) override;
    Tensor forward(const Tensor& x, const Context& ctx) override;
    Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) override;
    const Sequential& body() const { return *body_; }
    const Sequential* shortcut() const { return shortcut_.get(); }

  private:
    std::string name_;
    std::unique_ptr<Sequential> body_, shortcut_;
    KernelCache<AddKernel> join_, input_grads_;
};

}  // namespace scalelab::nn
