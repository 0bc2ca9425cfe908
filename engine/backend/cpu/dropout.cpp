// Dropout, element-wise over the buffer in whatever layout it has. Each element's keep-decision
// is drawn from its logical NCHW index (dropout_mask.h), as the GPU draws it, so every backend
// and every oneDNN blocking (which depends on the machine's vector width) drops the same
// activations. Forward keeps the per-element factor m = keep / (1 - p), and backward is
// dx = dy * m; channel padding gets m = 0 (it holds zeros, and stays zero).

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/dropout_mask.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

// For a blocked layout: 1 + the logical NCHW index of each element of the buffer, 0 in its
// channel padding, found by reordering 1, 2, ..., numel from plain NCHW into the layout (as
// 32-bit integers: floats would stop counting exactly at 2^24). Empty for a plain layout, where
// an element's place in the buffer is its logical index.
std::vector<std::int32_t> logical_indices(const DnnlContext& ctx, const TensorDesc& x) {
    if (x.plain())
        return {};
    const std::size_t numel = x.shape.numel();
    if (numel >= std::size_t(std::numeric_limits<std::int32_t>::max()))
        throw Error(ErrorKind::InvalidSpec,
                    "dropout over " + std::to_string(numel) +
                        " activations per device (at most 2^31 - 2): use a smaller batch");
    dnnl::memory::desc plain(dims_of(x.shape), dnnl::memory::data_type::s32,
                             dnnl::memory::format_tag::nchw);
    dnnl::memory::desc laid = md_of(x);
    laid.data.data_type = dnnl_s32;  // the same blocking, of 4-byte integers
    std::vector<std::int32_t> counting(numel);
    std::iota(counting.begin(), counting.end(), 1);
    std::vector<std::int32_t> indices(laid.get_size() / sizeof(std::int32_t));
    // A reorder into a blocked layout writes zeros into its padding; on the CPU it is done when
    // run() returns, as every kernel's work is.
    Reorder(plain, laid, ctx)
        .run(ctx, dnnl::memory(plain, ctx.engine, counting.data()),
             dnnl::memory(laid, ctx.engine, indices.data()));
    return indices;
}

class CpuDropout final : public DropoutKernel {
  public:
    CpuDropout(const DnnlContext& ctx, const TensorDesc& x)
        : desc_(x),
          y_(owned(md_of(x), ctx)),
          dx_(owned(md_of(x), ctx)),
          mask_(x.bytes() / sizeof(float)),
          logical_(logical_indices(ctx, x)) {}

    Tensor forward(const Tensor& x, float p, std::uint64_t seed) override {
        const float scale = 1.0f / (1.0f - p);
        const std::int64_t n = std::int64_t(mask_.size());
        float* __restrict y = data_of(y_);
        float* __restrict m = mask_.data();
        const float* __restrict in = x.data;
        const std::int32_t* __restrict logical = logical_.data();
        const bool plain = logical_.empty();
#pragma omp parallel for schedule(static)
        for (std::int64_t i = 0; i < n; ++i) {
            const bool kept =
                plain ? dropout_keeps(seed, std::uint64_t(i), p)
                      : logical[i] > 0 && dropout_keeps(seed, std::uint64_t(logical[i] - 1), p);
            m[i] = kept ? scale : 0.0f;
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
    std::vector<std::int32_t> logical_;  // logical_indices(x); empty for plain x
};

}  // namespace

std::unique_ptr<DropoutKernel> make_dropout(const DnnlContext& ctx, const TensorDesc& x) {
    return std::make_unique<CpuDropout>(ctx, x);
}

}  // namespace scalelab::cpu
