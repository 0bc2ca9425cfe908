#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/communicator.h"
#include "optim/parameter_segment.h"

namespace scalelab::nn {

// A learnable tensor. The layer owns the description; the Model places its values and its
// gradient in the replica's two flat buffers and fills `value` and `grad` before first use.
struct Parameter {
    std::string name;
    optim::ParamRole role = optim::ParamRole::Weight;
    std::size_t size = 0;
    // Initial values: uniform in [-init_bound, init_bound] when init_bound > 0, else init_value.
    float init_bound = 0;
    float init_value = 0;
    float* value = nullptr;
    float* grad = nullptr;
    // Its dimensions in PyTorch's layout, which is also this one's (a linear weight is
    // out x in, a convolution's out x in x k x k): what an exported model file records.
    std::vector<int> shape{};
};

// Non-learned state that must travel with the parameters (batch-norm running statistics).
struct StateBuffer {
    std::string name;
    std::size_t size = 0;
    float init_value = 0;
    float* value = nullptr;
    std::vector<int> shape{};  // as Parameter::shape
};

struct Declarations {
    std::vector<Parameter*> parameters;
    std::vector<StateBuffer*> buffers;
};

// What a layer needs besides its input: the device, the mode, the step's dropout seed, and
// in a data-parallel run the group that synchronised batch norm talks to.
struct Context {
    Backend& backend;
    bool training = true;
    std::uint64_t dropout_seed = 0;
    // Told, during backward, each time a layer has written its parameters' gradients: the
    // argument is one past the highest gradient written so far. Gradients are laid out in the
    // order backward produces them, so everything below it is final (the gradient reducer
    // starts all-reducing a bucket as soon as it is covered).
    std::function<void(const float* written_end)> on_gradients_written;

    void gradients_written(const Parameter& highest) const {
        if (on_gradients_written)
            on_gradients_written(highest.grad + highest.size);
    }

    // Synchronised batch norm in training: batch-norm layers take their statistics over the
    // batches of every rank of this group (a group of its own: the gradient reducer's thread
    // uses the main one during backward, and a communicator serves one thread at a time).
    // Null: per-device statistics, as DDP's default.
    comm::Communicator* sync_bn = nullptr;
};

// One layer of a model, behind one interface (as Caffe's layers). A layer asks its backend for
// a kernel the first time it sees an input shape and keeps it for every later step.
class Layer {
  public:
    virtual ~Layer() = default;
    virtual std::string name() const = 0;
    virtual Shape output_shape(const Shape& x) const = 0;
    // Multiply-adds x 2 of one sample's forward pass; backward costs about twice as much.
    virtual double forward_flops(const Shape& /*x*/) const { return 0; }

    // Registers parameters and buffers in the order backward produces their gradients
    // reversed (the Model lays the flat gradient buffer out in backward order).
    virtual void declare(Declarations& /*out*/) {}

    virtual Tensor forward(const Tensor& x, const Context& ctx) = 0;
    // dy in the layout of forward's output; returns dx in the layout of forward's input, or an
    // empty tensor when !want_dx (the model's first layer: nothing upstream needs it).
    virtual Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) = 0;
};

// The per-shape kernels of one layer: made on first use, reused after.
template <class Kernel>
class KernelCache {
  public:
    Kernel& get(const Shape& shape, const std::function<std::unique_ptr<Kernel>()>& make) {
        auto it = kernels_.find(shape);
        if (it == kernels_.end())
            it = kernels_.emplace(shape, make()).first;
        last_ = it->second.get();
        return *last_;
    }
    // The kernel of the latest forward, which backward must use.
    Kernel& last() const { return *last_; }

  private:
    std::map<Shape, std::unique_ptr<Kernel>> kernels_;
    Kernel* last_ = nullptr;
};

}  // namespace scalelab::nn
