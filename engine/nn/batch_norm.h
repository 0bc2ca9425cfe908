#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

// Batch normalisation over N, H, W per channel: batch statistics in training, running
// statistics in evaluation; optionally with the following ReLU fused in. The batch statistics
// are this device's (DDP's default), or with Context::sync_bn those of the global batch
// (PyTorch's SyncBatchNorm): see forward_synchronised.
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
    Tensor forward_synchronised(const Tensor& x, const Context& ctx);
    Tensor backward_synchronised(const Tensor& dy, bool want_dx);

    std::string name_;
    BatchNormConfig cfg_;
    Parameter scale_, shift_;
    StateBuffer running_mean_, running_var_;
    KernelCache<BatchNormKernel> training_kernels_, eval_kernels_;
    KernelCache<SyncBatchNormKernel> sync_kernels_;
    // Of the last training forward: the group it synchronised over (null: it did not), and
    // the global count its statistics were over, for backward.
    comm::Communicator* synced_over_ = nullptr;
    double global_count_ = 0;
    // Host buffers of the collectives, sized once per shape.
    std::vector<float> local_, gathered_, mean_, var_, sums_;
};

}  // namespace scalelab::nn
