#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "nn/layer.h"

namespace scalelab::nn {

// A parameter or state buffer of a model, by name ("conv1.weight", "stem.bn.running_mean"), with
// its dimensions in PyTorch's layout and where its values are in params() or state().
struct NamedTensor {
    std::string name;
    std::vector<int> shape;
    bool is_state = false;   // a state buffer (batch-norm running statistics), not a parameter
    std::size_t offset = 0;  // in floats, in params() or state()
    std::size_t size = 0;
};

// A replica: the layer graph plus its parameters, gradients and state in three flat device
// buffers. Invariants (relied on by the optimiser and the gradient reducer):
//  - params and grads have the same length and layout: parameter p is the same segment of both;
//  - segments are laid out in the order backward produces their gradients (last layer first),
//    so a gradient bucket is one contiguous slice;
//  - the initial values depend only on the seed, not on the backend or the thread count.
class Model {
  public:
    Model(std::unique_ptr<Layer> root, Shape input, Backend& backend, std::uint64_t seed);

    Tensor forward(const Tensor& x, const Context& ctx) { return root_->forward(x, ctx); }
    // Fills every parameter gradient from d loss / d logits (written, not accumulated).
    void backward(const Tensor& dlogits, const Context& ctx) {
        root_->backward(dlogits, ctx, false);
    }

    std::span<float> params() const { return params_.span(); }
    std::span<float> grads() const { return grads_.span(); }
    std::span<float> state() const { return state_.span(); }
    const std::vector<optim::ParamSegment>& segments() const { return segments_; }
    // Every parameter, then every state buffer, in declaration order (the layers' order).
    const std::vector<NamedTensor>& named_tensors() const { return named_tensors_; }

    const Layer& root() const { return *root_; }
    Shape input_shape() const { return input_; }
    double forward_flops_per_sample() const;
    std::size_t parameter_count() const { return params_.size(); }
    std::string summary() const;

  private:
    std::unique_ptr<Layer> root_;
    Shape input_;
    DeviceBuffer params_, grads_, state_;
    std::vector<optim::ParamSegment> segments_;
    std::vector<NamedTensor> named_tensors_;
};

}  // namespace scalelab::nn
