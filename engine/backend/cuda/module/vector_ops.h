#pragma once

#include <span>

#include "backend/cuda/module/gpu_context.h"

namespace scalelab::cuda {

// to += from, elementwise, on the context's stream.
void add_vector(GpuContext& ctx, std::span<const float> from, std::span<float> to);

// Loads the kernels of add_vector and SquaredNormAccumulator into the current device's context
// (see load_kernel): a step runs them, Replica::prepare does not.
void load_vector_kernels();

// A running sum of squared L2 norms kept on the GPU, so that adding a bucket's norm never waits
// for the stream. add(v): partial sums of v_i^2 in double, one per block of a fixed grid, then
// one block adds them in index order to the sum: the same bits on every run.
class SquaredNormAccumulator {
  public:
    explicit SquaredNormAccumulator(GpuContext& ctx);
    ~SquaredNormAccumulator();
    SquaredNormAccumulator(const SquaredNormAccumulator&) = delete;
    SquaredNormAccumulator& operator=(const SquaredNormAccumulator&) = delete;

    void add(std::span<const float> v);
    // Waits for the stream, returns the sum and sets it to 0.
    double take();

  private:
    void release();  // what was allocated

    GpuContext& ctx_;
    double* partials_ = nullptr;  // one per block of the grid
    double* sum_ = nullptr;
    double* host_sum_ = nullptr;  // pinned, for the copy back
};

}  // namespace scalelab::cuda
