// Dropout, element-wise over the buffer in whatever layout it has (padding stays zero: 0 * m = 0).
// Forward keeps the per-element factor m = keep / (1 - p), and backward is dx = dy * m.

#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/dropout_mask.h"

namespace scalelab::cpu {

namespace {

class CpuDropout final : public DropoutKernel {
  public:
    CpuDropout(const DnnlContext& ctx, const TensorDesc& x)
        : desc_(x),
          y_(owned(md_of(x), ctx)),
          dx_(owned(md_of(x), ctx)),
          mask_(x.bytes() / sizeof(float)) {}

    Tensor forward(const Tensor& x, float p, std::uint64_t seed) override {
        const float scale = 1.0f / (1.0f - p);
        const std::int64_t n = std::int64_t(mask_.size());
        float* __restrict y = data_of(y_);
        float* __restrict m = mask_.data();
        const float* __restrict in = x.data;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
            m[i] = dropout_keeps(seed, std::uint64_t(i), p) ? scale : 0.0f;
            y[i] = in[i] * m[i];
        }
        return Tensor{desc_, y};
    }

    Tensor backward(const Tensor& dy) override {
        const std::int64_t n = std::int64_t(mask_.size());
        float* __restrict dx = data_of(dx_);
        const float* __restrict m = mask_.data();
        const float* __restrict g = dy.data;
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i)
            dx[i] = g[i] * m[i];
        return Tensor{desc_, dx};
    }

  private:
    TensorDesc desc_;
    dnnl::memory y_, dx_;
    std::vector<float> mask_;
};

}  // namespace

std::unique_ptr<DropoutKernel> make_dropout(const DnnlContext& ctx, const TensorDesc& x) {
    return std::make_unique<CpuDropout>(ctx, x);
}

}  // namespace scalelab::cpu
