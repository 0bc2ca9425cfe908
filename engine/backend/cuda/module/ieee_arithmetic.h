#pragma once

// Float arithmetic rounded the way the CPU optimisers round it, for the fused optimisers'
// formulas (fused_*.h): device code in the GPU kernels, host code where the tests run the same
// formulas without a GPU.
//
// Every operation is rounded on its own, never contracted: nvcc would fuse a * b + c into one FMA
// (one rounding), while the CPU optimisers (x86-64 without FMA) round the product and the sum
// apart. With these the GPU gives the CPU's bits for the same formula in the same order. The
// _rn division and square root are IEEE's, whatever -prec-div/-prec-sqrt say. On the host the
// plain operators round the same way: the engine is built for x86-64 without FMA, so GCC has no
// instruction to contract them into.

#include <cmath>

// A function of the formulas, callable from kernels and from the host.
#ifdef __CUDACC__
#define SCALELAB_HOST_DEVICE __host__ __device__
#else
#define SCALELAB_HOST_DEVICE
#endif

namespace scalelab::cuda::ieee {

SCALELAB_HOST_DEVICE inline float add(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
}

SCALELAB_HOST_DEVICE inline float sub(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
}

SCALELAB_HOST_DEVICE inline float mul(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
}

SCALELAB_HOST_DEVICE inline float div(float a, float b) {
#ifdef __CUDA_ARCH__
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
}

SCALELAB_HOST_DEVICE inline float sqrt(float a) {
#ifdef __CUDA_ARCH__
    return __fsqrt_rn(a);
#else
    return std::sqrt(a);
#endif
}

SCALELAB_HOST_DEVICE inline double add(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
}

SCALELAB_HOST_DEVICE inline double sub(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
}

SCALELAB_HOST_DEVICE inline double mul(double a, double b) {
#ifdef __CUDA_ARCH__
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
}

SCALELAB_HOST_DEVICE inline double div(double a, double b) {
#ifdef __CUDA_ARCH__
    return __ddiv_rn(a, b);
#else
    return a / b;
#endif
}

SCALELAB_HOST_DEVICE inline double sqrt(double a) {
#ifdef __CUDA_ARCH__
    return __dsqrt_rn(a);
#else
    return std::sqrt(a);
#endif
}

// The CPU's detail::safe_ratio: numerator / denominator, or 1 when either is 0.
SCALELAB_HOST_DEVICE inline double safe_ratio(double numerator, double denominator) {
    return (numerator > 0 && denominator > 0) ? div(numerator, denominator) : 1.0;
}

}  // namespace scalelab::cuda::ieee
