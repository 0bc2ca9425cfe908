#pragma once

namespace scalelab::cpu {

// The matrix sides measure_sgemm_peak accepts (three 8192^2 matrices take 768 MiB).
inline constexpr int sgemm_min_size = 16;
inline constexpr int sgemm_max_size = 8192;

// The machine's fp32 matrix-multiply rate: the reference that training GFLOP/s are compared to.
struct SgemmPeak {
    int threads = 0;
    int size = 0;  // the matrices were size x size
    double gflops_median = 0.0;
    double gflops_max = 0.0;
};

// Times oneDNN's fp32 matrix multiply (its matmul primitive, the kernels of the CPU backend's
// linear layers: C = A * B, all size x size, row-major) on `threads` OpenMP threads:
// two untimed calls, then `repeats` timed calls of 2 * size^3 flops each. Sets the OpenMP
// thread count of the calling thread, as a CPU device does. Throws Error(InvalidSpec) for
// threads < 1, size outside sgemm_min_size..sgemm_max_size or repeats < 1.
SgemmPeak measure_sgemm_peak(int threads, int size = 1024, int repeats = 10);

}  // namespace scalelab::cpu
