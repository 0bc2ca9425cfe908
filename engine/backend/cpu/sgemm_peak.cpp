#include "backend/cpu/sgemm_peak.h"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/cpu/dnnl_util.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

using Clock = std::chrono::steady_clock;
using dnnl::memory;

// Small non-zero values, +-0.0005 to +-0.4995 (never 0, no denormals), so every multiply does
// real work.
void fill(float* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;  // a linear congruential generator: cheap, fixed
        p[i] = (static_cast<float>((seed >> 8) % 1000) + 0.5f) / 1000.0f - 0.5f;
    }
}

// C = A * B on oneDNN's matmul primitive, the kernels the CPU backend's linear layers run. Not
// dnnl_sgemm: it mallocs its packing buffers on every call, and with large blocks given back
// to the system (allocator_policy.h) it then spends a third of its time faulting them in.
class MatrixMultiply {
  public:
    MatrixMultiply(const DnnlContext& ctx, int size)
        : ctx_(ctx),
          md_({size, size}, memory::data_type::f32, memory::format_tag::ab),
          prim_(dnnl::matmul::primitive_desc({md_, md_, md_}, ctx.engine)),
          a_(md_, ctx.engine),
          b_(md_, ctx.engine),
          c_(md_, ctx.engine) {
        const std::size_t elements = std::size_t(size) * std::size_t(size);
        fill(data_of(a_), elements, 1);
        fill(data_of(b_), elements, 2);
        std::fill_n(data_of(c_), elements, 0.0f);
    }
    void run() const {
        prim_.execute(ctx_.stream,
                      {{DNNL_ARG_SRC, a_}, {DNNL_ARG_WEIGHTS, b_}, {DNNL_ARG_DST, c_}});
    }

  private:
    const DnnlContext& ctx_;
    memory::desc md_;
    dnnl::matmul prim_;
    memory a_, b_, c_;
};

}  // namespace

SgemmPeak measure_sgemm_peak(int threads, int size, int repeats) {
    if (threads < 1)
        throw Error(ErrorKind::InvalidSpec, "sgemm threads must be at least 1, got " +
                                                std::to_string(threads) +
                                                ": give a positive thread count");
    if (size < sgemm_min_size || size > sgemm_max_size)
        throw Error(ErrorKind::InvalidSpec,
                    "sgemm size must be between " + std::to_string(sgemm_min_size) + " and " +
                        std::to_string(sgemm_max_size) + ", got " + std::to_string(size) +
                        ": choose a matrix side in that range (1024 is typical)");
    if (repeats < 1)
        throw Error(ErrorKind::InvalidSpec, "sgemm repeats must be at least 1, got " +
                                                std::to_string(repeats) +
                                                ": give a positive number of timed calls");

    omp_set_num_threads(threads);  // per calling thread, as CpuBackend does

    const DnnlContext ctx;
    std::optional<MatrixMultiply> multiply;
    try {
        multiply.emplace(ctx, size);
    } catch (const dnnl::error&) {
        throw Error(
            ErrorKind::OutOfMemory,
            "could not allocate " +
                std::to_string(3 * std::size_t(size) * std::size_t(size) * sizeof(float) >> 20) +
                " MiB for the sgemm benchmark: use a smaller matrix size");
    }
    for (int i = 0; i < 2; ++i)  // warm-up: thread pool, caches
        multiply->run();

    const double flops = 2.0 * double(size) * double(size) * double(size);
    std::vector<double> gflops;
    gflops.reserve(std::size_t(repeats));
    for (int i = 0; i < repeats; ++i) {
        const Clock::time_point start = Clock::now();
        multiply->run();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        gflops.push_back(flops / std::max(seconds, 1e-9) / 1e9);
    }

    std::sort(gflops.begin(), gflops.end());
    const std::size_t mid = gflops.size() / 2;
    const double median =
        gflops.size() % 2 == 1 ? gflops[mid] : (gflops[mid - 1] + gflops[mid]) / 2.0;
    return SgemmPeak{threads, size, median, gflops.back()};
}

}  // namespace scalelab::cpu
