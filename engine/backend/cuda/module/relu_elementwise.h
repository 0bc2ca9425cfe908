#pragma once

// The ReLU's elementwise passes, shared by the ReLU layer and batch norm with a fused ReLU.
// Both are enqueued on `stream` and return without waiting.

#include <cuda_runtime_api.h>

#include <cstddef>

namespace scalelab::cuda {

// y = max(x, 0) over n values (NaN passes through, as in PyTorch). y may be x (in place).
void relu_forward(const float* x, float* y, std::size_t n, cudaStream_t stream);

// dx = dy where y > 0, else 0 (at y = 0 the gradient is 0, as oneDNN's and PyTorch's ReLU),
// from the forward pass's output y. dx may be dy.
void relu_backward(const float* y, const float* dy, float* dx, std::size_t n, cudaStream_t stream);

}  // namespace scalelab::cuda
