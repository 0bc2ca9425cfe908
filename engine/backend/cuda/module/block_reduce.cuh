#pragma once

// Block-wide reductions in a fixed order, so that a kernel gives the same bits on every run (no
// atomics): each warp folds its 32 values with a shuffle tree, then every warp folds the warps'
// results the same way. The result is the same in every thread of the block. Every thread of the
// block must call them, with blockDim.x a multiple of 32 and at most 1024.

#include <cuda_runtime.h>

namespace scalelab::cuda {

inline constexpr int kWarpSize = 32;
inline constexpr unsigned int kFullWarp = 0xffffffffu;

// Folds `v` over the lanes of the warp with `combine`, the lane pairing fixed (lane l takes lane
// l + offset for offset 16, 8, 4, 2, 1); the result is in lane 0.
template <class T, class Combine>
__device__ T warp_fold(T v, Combine combine) {
    for (int offset = kWarpSize / 2; offset > 0; offset /= 2)
        v = combine(v, __shfl_down_sync(kFullWarp, v, offset));
    return v;
}

// Folds every thread's `v` with `combine`; `identity` fills the lanes past the last warp.
template <class T, class Combine>
__device__ T block_fold(T v, T identity, Combine combine) {
    __shared__ T warp_results[kWarpSize];
    const int lane = int(threadIdx.x) % kWarpSize;
    const int warp = int(threadIdx.x) / kWarpSize;
    const int warps = int(blockDim.x) / kWarpSize;
    v = warp_fold(v, combine);
    __syncthreads();  // the previous call's readers are done with warp_results
    if (lane == 0)
        warp_results[warp] = v;
    __syncthreads();
    v = warp_fold(lane < warps ? warp_results[lane] : identity, combine);
    return __shfl_sync(kFullWarp, v, 0);
}

struct Plus {
    template <class T>
    __device__ T operator()(T a, T b) const {
        return a + b;
    }
};

// The sum of every thread's `v` (float or double).
template <class T>
__device__ T block_sum(T v) {
    return block_fold(v, T(0), Plus{});
}

}  // namespace scalelab::cuda
