// Dropout on the GPU with the CPU backend's mask (dropout_mask.h, a pure function of the seed and
// the element index): y = x m, dx = dy m with m = keep / (1 - p). Backward draws the mask again
// from the seed and p that forward kept, instead of storing it: the same bits, no buffer.

#include <cstdint>

#include "backend/cuda/module/gpu_kernels.h"
#include "backend/dropout_mask.h"

namespace scalelab::cuda {

namespace {

// out[i] = in[i] m_i, m_i = dropout_keeps(seed, i, p) ? 1 / (1 - p) : 0, as the CPU computes it
// (p = 0 keeps everything with m = 1; p = 1 drops everything).
__global__ void apply_dropout_mask(const float* in, std::size_t count, float p, std::uint64_t seed,
                                   float* out) {
    const float scale = 1.0f / (1.0f - p);
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const float m = dropout_keeps(seed, std::uint64_t(i), p) ? scale : 0.0f;
        out[i] = in[i] * m;
    }
}

class GpuDropout final : public DropoutKernel {
  public:
    GpuDropout(GpuContext& ctx, const TensorDesc& x)
        : ctx_(ctx),
          desc_(x),
          y_(ctx.allocate(x.shape.numel())),
          dx_(ctx.allocate(x.shape.numel())) {}

    Tensor forward(const Tensor& x, float p, std::uint64_t seed) override {
        p_ = p;
        seed_ = seed;
        return apply(x.data, y_, "dropout forward");
    }

    Tensor backward(const Tensor& dy) override { return apply(dy.data, dx_, "dropout backward"); }

  private:
    Tensor apply(const float* in, const DeviceBuffer& out, const char* name) {
        const std::size_t count = desc_.shape.numel();
        apply_dropout_mask<<<blocks_for(count), kThreadsPerBlock, 0, ctx_.stream()>>>(
            in, count, p_, seed_, out.data());
        check_launch(name);
        return Tensor{desc_, out.data()};
    }

    GpuContext& ctx_;
    TensorDesc desc_;
    DeviceBuffer y_, dx_;
    float p_ = 0;  // of the last forward, for backward
    std::uint64_t seed_ = 0;
};

}  // namespace

std::unique_ptr<DropoutKernel> make_dropout(GpuContext& ctx, const TensorDesc& x) {
    require_plain(x, "dropout");
    return std::make_unique<GpuDropout>(ctx, x);
}

}  // namespace scalelab::cuda
