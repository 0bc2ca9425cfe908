#pragma once

#include <memory>
#include <vector>

#include "nn/layer.h"

namespace scalelab::nn {

// Layers applied one after another; backward runs them in reverse.
class Sequential final : public Layer {
  public:
    explicit Sequential(std::string name) : name_(std::move(name)) {}
    Sequential& add(std::unique_ptr<Layer> layer);
    template <class L, class... Args>
    Sequential& emplace(Args&&... args) {
        return add(std::make_unique<L>(std::forward<Args>(args)...));
    }
    const std::vector<std::unique_ptr<Layer>>& layers() const { return layers_; }

    std::string name() const override { return name_; }
    Shape output_shape(const Shape& x) const override;
    double forward_flops(const Shape& x) const override;
    void declare(Declarations& out) override;
    Tensor forward(const Tensor& x, const Context& ctx) override;
    Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) override;

  private:
    std::string name_;
    std::vector<std::unique_ptr<Layer>> layers_;
};

}  // namespace scalelab::nn
