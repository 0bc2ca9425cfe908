// ReLU as two elementwise passes of its own (no cuDNN activation descriptor needed). Backward
// reads the saved output: y > 0 exactly where x > 0, so x may be reused once forward has run.

#include <cmath>

#include "backend/cuda/module/gpu_kernels.h"
#include "backend/cuda/module/relu_elementwise.h"

namespace scalelab::cuda {

namespace {

__global__ void relu_forward_kernel(const float* x, float* y, std::size_t n) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = x[i];
        y[i] = (v > 0.0f || isnan(v)) ? v : 0.0f;
    }
}

__global__ void relu_backward_kernel(const float* y, const float* dy, float* dx, std::size_t n) {
    const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

class GpuRelu final : public ReluKernel {
  public:
    GpuRelu(GpuContext& ctx, const TensorDesc& x)
        : ctx_(ctx),
          desc_(x),
          y_(ctx.allocate(x.shape.numel())),
          dx_(ctx.allocate(x.shape.numel())) {}

    Tensor forward(const Tensor& x) override {
        relu_forward(x.data, y_.data(), y_.size(), ctx_.stream());
        return Tensor{desc_, y_.data()};
    }

    Tensor backward(const Tensor& dy) override {
        relu_backward(y_.data(), dy.data, dx_.data(), dx_.size(), ctx_.stream());
        return Tensor{desc_, dx_.data()};
    }

  private:
    GpuContext& ctx_;
    TensorDesc desc_;  // of the input, the output and dx alike
    DeviceBuffer y_, dx_;
};

}  // namespace

void relu_forward(const float* x, float* y, std::size_t n, cudaStream_t stream) {
    relu_forward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(x, y, n);
    check_launch("relu_forward");
}

void relu_backward(const float* y, const float* dy, float* dx, std::size_t n, cudaStream_t stream) {
    relu_backward_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream>>>(y, dy, dx, n);
    check_launch("relu_backward");
}

std::unique_ptr<ReluKernel> make_relu(GpuContext& ctx, const TensorDesc& x) {
    require_plain(x, "ReLU");
    return std::make_unique<GpuRelu>(ctx, x);
}

}  // namespace scalelab::cuda
