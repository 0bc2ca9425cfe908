#pragma once

// How the fused optimisers (fused_*.h) run on the GPU: the pass that updates every chunk of the
// flat buffers, and the deterministic per-segment sums (norms) that LARS, LAMB and NovoGrad need
// before their update, as kernels; their arrays in GPU memory (GpuPasses).

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

// Loads the kernels of ChunkedSegments::update(Update) and ::sum<kSums>(Terms, Finish) into the
// current device's context (see load_kernel): an optimiser's maker does, for the passes its step
// runs.
template <class Update>
void load_update_pass(const char* name) {
    load_kernel(update_chunks<Update>, name);
}
template <int kSums, class Terms, class Finish>
void load_sum_pass(const char* name) {
    load_kernel(sum_chunks<kSums, Terms>, name);
    load_kernel(sum_segments<kSums, Finish>, name);
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

// The fused optimisers' passes and arrays on the GPU of the current device, in the order of the
// stream they are made with (see fused_optimizer_passes.h).
struct GpuPasses {
    using Context = cudaStream_t;
    template <class T>
    using Array = DeviceArray<T>;
    using Segments = ChunkedSegments;
};

}  // namespace scalelab::cuda
