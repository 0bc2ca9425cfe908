#pragma once

#include "nn/layer.h"

namespace scalelab::nn {

struct BatchNormOptions {
    bool fused_relu = false;  // y = relu(bn(x)) in one pass
    // gamma's initial value: 1 as PyTorch, 0 for the last batch norm of a residual block
    // (Goyal et al. 2017's zero-initialised residual: each block starts as its shortcut).
    float initial_scale = 1.0f;
    // Ghost batch norm (Hoffer et al. 2017): in training, statistics over each virtual batch of
    // this many samples instead of the whole per-device batch; 0: off. See forward_ghost.
    int ghost_batch = 0;
};

// Batch normalisation over N, H, W per channel: batch statistics in training, running
// statistics in evaluation; optionally with the following ReLU fused in. The batch statistics
// are this device's (DDP's default), or with Context::sync_bn those of the global batch
// (PyTorch's SyncBatchNorm): see forward_synchronised; or with BatchNormOptions::ghost_batch
// those of each virtual batch of that many samples (ghost batch norm): see forward_ghost.
// Evaluation always uses the running statistics.
class BatchNorm final : public Layer {
  public:
    enum class Activation { None, Relu };
    BatchNorm(std::string name, int channels, Activation activation = Activation::None);
    BatchNorm(std::string name, int channels, const BatchNormOptions& options);
    std::string name() const override;
    Shape output_shape(const Shape& x) const override { return x; }
    void declare(Declarations& out) override;
    Tensor forward(const Tensor& x, const Context& ctx) override;
    Tensor backward(const Tensor& dy, const Context& ctx, bool want_dx) override;

  private:
    Tensor forward_synchronised(const Tensor& x, const Context& ctx);
    Tensor backward_synchronised(const Tensor& dy, bool want_dx);
    Tensor forward_ghost(const Tensor& x, const Context& ctx);
    Tensor backward_ghost(const Tensor& dy, const Context& ctx, bool want_dx);

    // The ghost path's plan for one input shape: the input in plain NCHW (where a slice of
    // samples is contiguous), one kernel per slice (a kernel keeps its slice's statistics and
    // ReLU mask for backward), and full-size buffers for y and dx.
    struct GhostPlan {
        std::unique_ptr<ReorderKernel> input, output;  // x's layout <-> plain, both ways
        std::vector<std::unique_ptr<BatchNormKernel>> slices;
        DeviceBuffer y, dx, dscale, dshift;
    };

    std::string name_;
    BatchNormConfig cfg_;
    int ghost_batch_ = 0;
    Parameter scale_, shift_;
    StateBuffer running_mean_, running_var_;
    KernelCache<BatchNormKernel> training_kernels_, eval_kernels_;
    KernelCache<SyncBatchNormKernel> sync_kernels_;
    KernelCache<GhostPlan> ghost_plans_;
    bool ghosted_ = false;  // the last training forward took the ghost path
    // Of the last training forward: the group it synchronised over (null: it did not), and
    // the global count its statistics were over, for backward.
    comm::Communicator* synced_over_ = nullptr;
    double global_count_ = 0;
    // Host buffers of the collectives, sized once per shape.
    std::vector<float> local_, gathered_, mean_, var_, sums_;
};

}  // namespace scalelab::nn
