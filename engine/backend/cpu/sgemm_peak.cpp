#include "backend/cpu/sgemm_peak.h"

#include <dnnl.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "error.h"

namespace scalelab::cpu {

namespace {

using Clock = std::chrono::steady_clock;

struct FreeDeleter {
    void operator()(float* p) const { std::free(p); }
};
using AlignedFloats = std::unique_ptr<float[], FreeDeleter>;

// n floats on a 64-byte boundary (a cache line, and what AVX-512 loads like best).
AlignedFloats allocate_aligned(std::size_t n) {
    const std::size_t bytes = ((n * sizeof(float) + 63) / 64) * 64;
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr)
        throw Error(ErrorKind::OutOfMemory, "could not allocate " + std::to_string(bytes >> 20) +
                                                " MiB for the sgemm benchmark: use a smaller "
                                                "matrix size");
    return AlignedFloats(p);
}

// Small non-zero values, +-0.0005 to +-0.4995 (never 0, no denormals), so every multiply does
// real work.
void fill(float* p, std::size_t n, std::uint32_t seed) {
    for (std::size_t i = 0; i < n; ++i) {
        seed = seed * 1664525u + 1013904223u;  // a linear congruential generator: cheap, fixed
        p[i] = (static_cast<float>((seed >> 8) % 1000) + 0.5f) / 1000.0f - 0.5f;
    }
}

void sgemm(int size, const float* a, const float* b, float* c) {
    const dnnl_dim_t n = size;
    const dnnl_status_t status = dnnl_sgemm('N', 'N', n, n, n, 1.0f, a, n, b, n, 0.0f, c, n);
    if (status != dnnl_success)
        throw Error(ErrorKind::Internal,
                    "oneDNN sgemm failed with status " + std::to_string(int(status)));
}

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

    const std::size_t elements = std::size_t(size) * std::size_t(size);
    const AlignedFloats a = allocate_aligned(elements);
    const AlignedFloats b = allocate_aligned(elements);
    const AlignedFloats c = allocate_aligned(elements);
    fill(a.get(), elements, 1);
    fill(b.get(), elements, 2);
    std::fill(c.get(), c.get() + elements, 0.0f);

    for (int i = 0; i < 2; ++i)  // warm-up: thread pool, caches, oneDNN's kernel selection
        sgemm(size, a.get(), b.get(), c.get());

    const double flops = 2.0 * double(size) * double(size) * double(size);
    std::vector<double> gflops;
    gflops.reserve(std::size_t(repeats));
    for (int i = 0; i < repeats; ++i) {
        const Clock::time_point start = Clock::now();
        sgemm(size, a.get(), b.get(), c.get());
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
