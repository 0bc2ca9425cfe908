#pragma once

#include <span>
#include <string_view>

namespace scalelab::optim {

// One optimiser instance per replica: it updates that replica's parameters from its
// (already all-reduced, globally averaged) gradients, once per training step.
//
// Contract:
// - `params` and `grads` are the replica's two flat buffers, of equal length and laid out
//   identically (see ParamSegment). The segments are given to the concrete optimiser's
//   constructor, which also allocates all of its state (momentum, moments, ...) once, sized
//   to the segments; step() never allocates. Every call must pass buffers with the same layout.
// - Only floats inside a segment are read or written; padding between segments is left alone.
// - `lr` is this step's learning rate, already scheduled and warmed up (LrSchedule) and scaled
//   (LR scaling rules): the optimiser knows nothing about steps or epochs.
// - The buffers are in the memory of the replica's backend, which makes its optimiser
//   (Backend::optimizer): on CPU devices host memory, updated by this folder's optimisers
//   (make_optimizer); on a GPU device memory, updated by the fused kernels of
//   backend/cuda/module/fused_optimizers.h on the compute stream, behind this same interface,
//   so the trainer never knows which it has.
// - Per-parameter quantities (norms for LARS/LAMB/NovoGrad, decay exclusions) come from the
//   segments and their roles, so new optimisers fit without changing this interface.
class Optimizer {
  public:
    virtual ~Optimizer() = default;

    // A short lowercase name for logs and the UI, e.g. "sgd".
    virtual std::string_view name() const = 0;

    // One update: params <- f(params, grads, state, lr).
    virtual void step(std::span<float> params, std::span<const float> grads, double lr) = 0;

  protected:
    Optimizer() = default;
    Optimizer(const Optimizer&) = default;
    Optimizer& operator=(const Optimizer&) = default;
};

}  // namespace scalelab::optim
