// The residual join y = a + b on the GPU. Both inputs are plain NCHW of one shape (the CUDA
// backend has no other layout), so the gradient reaches b as it is: gradient_for_b returns dy.

#include <string>

#include "backend/cuda/module/gpu_kernels.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

__global__ void add_elementwise(const float* a, const float* b, std::size_t count, float* y) {
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        y[i] = a[i] + b[i];
}

class GpuAdd final : public AddKernel {
  public:
    GpuAdd(GpuContext& ctx, const TensorDesc& a)
        : ctx_(ctx), desc_(a), y_(ctx.allocate(a.shape.numel())) {}

    Tensor forward(const Tensor& a, const Tensor& b) override {
        const std::size_t count = desc_.shape.numel();
        add_elementwise<<<blocks_for(count), kThreadsPerBlock, 0, ctx_.stream()>>>(
            a.data, b.data, count, y_.data());
        check_launch("add");
        return Tensor{desc_, y_.data()};
    }

    // d(a + b)/db = 1: dy itself, a view (b has a's shape and layout).
    Tensor gradient_for_b(const Tensor& dy) override { return Tensor{desc_, dy.data}; }

  private:
    GpuContext& ctx_;
    TensorDesc desc_;  // of a, b and the output alike
    DeviceBuffer y_;
};

}  // namespace

std::unique_ptr<AddKernel> make_add(GpuContext& ctx, const TensorDesc& a, const TensorDesc& b) {
    require_plain(a, "add");
    require_plain(b, "add");
    if (a.shape != b.shape)
        throw Error(ErrorKind::Internal, "the GPU add kernel needs inputs of one shape, got " +
                                             a.shape.str() + " and " + b.shape.str());
    return std::make_unique<GpuAdd>(ctx, a);
}

}  // namespace scalelab::cuda
