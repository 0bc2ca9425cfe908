#pragma once

// What the fused optimisers share on the GPU: float arithmetic rounded like the CPU
// optimisers', the pass that updates every chunk of the flat buffers, and the deterministic
// per-segment sums (norms) that LARS, LAMB and NovoGrad need before their update.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "backend/cuda/module/block_reduce.cuh"
#include "backend/cuda/module/gpu_context.h"
#include "backend/cuda/module/optimizer_chunks.h"
#include "backend/cuda/module/optimizer_device_array.h"

namespace scalelab::cuda {

// Every operation rounded on its own, never contracted: nvcc would fuse a * b + c into one FMA
// (one rounding), while the CPU optimisers (x86-64 without FMA) round the product and the sum
// apart. With these the GPU gives the CPU's bits for the same formula in the same order. The
// _rn division and square root are IEEE's, whatever -prec-div/-prec-sqrt say.
namespace ieee {

__device__ inline float add(float a, float b) {
    return __fadd_rn(a, b);
}
__device__ inline float sub(float a, float b) {
    return __fsub_rn(a, b);
}
__device__ inline float mul(float a, float b) {
    return __fmul_rn(a, b);
}
__device__ inline float div(float a, float b) {
    return __fdiv_rn(a, b);
}
__device__ inline float sqrt(float a) {
    return __fsqrt_rn(a);
}
__device__ inline double add(double a, double b) {
    return __dadd_rn(a, b);
}
__device__ inline double sub(double a, double b) {
    return __dsub_rn(a, b);
}
__device__ inline double mul(double a, double b) {
    return __dmul_rn(a, b);
}
__device__ inline double div(double a, double b) {
    return __ddiv_rn(a, b);
}
__device__ inline double sqrt(double a) {
    return __dsqrt_rn(a);
}

}  // namespace ieee

// The CPU's detail::safe_ratio: numerator / denominator, or 1 when either is 0.
__device__ inline double safe_ratio(double numerator, double denominator) {
    return (numerator > 0 && denominator > 0) ? ieee::div(numerator, denominator) : 1.0;
}

// The grid of a kernel over `count` chunks, one block each (grid-stride past the limit).
inline unsigned int chunk_grid(std::uint64_t count) {
    constexpr std::uint64_t kMaxBlocks = 65535;
    return static_cast<unsigned int>(std::clamp<std::uint64_t>(count, 1, kMaxBlocks));
}

// One block per chunk: update.segment(s) reads what the chunk's segment s needs once (its
// weight decay, per-tensor factor), then update(that, i) updates float i of the flat buffers.
template <class Update>
__global__ void update_chunks(const OptimizerChunk* chunks, std::uint64_t chunk_count,
                              Update update) {
    for (std::uint64_t k = blockIdx.x; k < chunk_count; k += gridDim.x) {
        const OptimizerChunk chunk = chunks[k];
        const auto segment = update.segment(chunk.segment);
        const std::uint64_t end = chunk.begin + chunk.size;
        for (std::uint64_t i = chunk.begin + threadIdx.x; i < end; i += blockDim.x) {
            update(segment, i);
        }
    }
}

// Per-segment sums, stage 1: one block per chunk adds terms.add(that, i, sums) over the
// chunk's floats (each thread its strided share, then block_sum's fixed tree) and writes the
// chunk's kSums sums to partials[k * kSums ...]. No atomics: the same bits on every run.
template <int kSums, class Terms>
__global__ void sum_chunks(const OptimizerChunk* chunks, std::uint64_t chunk_count, Terms terms,
                           double* partials) {
    for (std::uint64_t k = blockIdx.x; k < chunk_count; k += gridDim.x) {
        const OptimizerChunk chunk = chunks[k];
        const auto segment = terms.segment(chunk.segment);
        double sums[kSums] = {};
        const std::uint64_t end = chunk.begin + chunk.size;
        for (std::uint64_t i = chunk.begin + threadIdx.x; i < end; i += blockDim.x) {
            terms.add(segment, i, sums);
        }
        for (int j = 0; j < kSums; ++j) {
            const double total = block_sum(sums[j]);
            if (threadIdx.x == 0) {
                partials[k * kSums + j] = total;
            }
        }
    }
}

// Stage 2: one block per segment adds its chunks' partial sums in a fixed order and thread 0
// hands them to finish(segment index, sums), which stores the segment's factor for the update.
template <int kSums, class Finish>
__global__ void sum_segments(const SegmentChunks* segments, std::uint64_t segment_count,
                             const double* partials, Finish finish) {
    for (std::uint64_t r = blockIdx.x; r < segment_count; r += gridDim.x) {
        const SegmentChunks range = segments[r];
        double sums[kSums];
        for (int j = 0; j < kSums; ++j) {
            double sum = 0.0;
            for (std::uint64_t c = threadIdx.x; c < range.chunk_count; c += blockDim.x) {
                sum += partials[(range.first_chunk + c) * kSums + j];
            }
            sums[j] = block_sum(sum);
        }
        if (threadIdx.x == 0) {
            finish(range.segment, sums);
        }
    }
}

// A chunk table in GPU memory, uploaded once, with room for kSums partial sums per chunk when
// it is also summed over: the passes of one optimiser over the segments it was made for.
class ChunkedSegments {
  public:
    ChunkedSegments(const ChunkTable& table, int sums_per_chunk, cudaStream_t stream)
        : stream_(stream),
          chunks_(std::span<const OptimizerChunk>(table.chunks), stream),
          segments_(std::span<const SegmentChunks>(table.segments), stream),
          partials_(table.chunks.size() * static_cast<std::size_t>(sums_per_chunk), stream),
          sums_per_chunk_(sums_per_chunk) {}

    // One launch of update_chunks over every chunk.
    template <class Update>
    void update(const Update& update, const char* kernel) const {
        if (chunks_.size() == 0) {
            return;
        }
        update_chunks<<<chunk_grid(chunks_.size()), kThreadsPerBlock, 0, stream_>>>(
            chunks_.data(), chunks_.size(), update);
        check_launch(kernel);
    }

    // Each segment's kSums sums of terms over its floats, handed to finish: two launches,
    // whatever the number of segments.
    template <int kSums, class Terms, class Finish>
    void sum(const Terms& terms, const Finish& finish, const char* kernel) const {
        if (chunks_.size() == 0) {
            return;
        }
        if (kSums != sums_per_chunk_) {
            throw Error(ErrorKind::Internal, std::string(kernel) +
                                                 ": the chunk table was made for " +
                                                 std::to_string(sums_per_chunk_) + " sums, not " +
                                                 std::to_string(kSums));
        }
        sum_chunks<kSums><<<chunk_grid(chunks_.size()), kThreadsPerBlock, 0, stream_>>>(
            chunks_.data(), chunks_.size(), terms, partials_.data());
        check_launch(kernel);
        sum_segments<kSums><<<chunk_grid(segments_.size()), kThreadsPerBlock, 0, stream_>>>(
            segments_.data(), segments_.size(), partials_.data(), finish);
        check_launch(kernel);
    }

  private:
    cudaStream_t stream_;
    DeviceArray<OptimizerChunk> chunks_;
    DeviceArray<SegmentChunks> segments_;
    DeviceArray<double> partials_;
    int sums_per_chunk_;
};

}  // namespace scalelab::cuda
