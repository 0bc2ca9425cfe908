#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <cstddef>

#include "backend/backend.h"
#include "backend/cuda/module/gpu_context.h"

namespace scalelab::cuda {

// The GPU's InputStage: each batch goes from the caller's (pageable) memory into a pinned host
// buffer, then to a device buffer by an asynchronous copy on a copy stream of its own, so that
// the copy runs beside the compute stream's kernels (a copy from pageable memory would be
// staged by the driver and serialised with them). Two slots of each, used in turn: batch i+1
// is copied into one while the kernels of batch i read the other.
//
// Orderings, for batch i in slot s (i mod 2), all on the GPU except the first:
//  - the host overwrites pinned[s] only once copied[s] (the copy of batch i-2) has completed:
//    cudaEventSynchronize, long done by then;
//  - released[s ^ 1] is recorded on the compute stream before the copy: all work given so far
//    is batch i-1's (and earlier), the last that reads slot s ^ 1;
//  - the copy stream waits for released[s], recorded likewise when batch i-1 was staged: batch
//    i-2's work, the last to read slot s, and not batch i-1's, which the copy overlaps;
//  - the compute stream waits for copied[s] before batch i's first kernel.
// A CUDA event that was never recorded counts as complete, which starts the first two batches.
// All memory is allocated by the constructor (see Replica::prepare for why).
class PinnedInputStage final : public InputStage {
  public:
    PinnedInputStage(GpuContext& ctx, std::size_t floats);
    ~PinnedInputStage() override;
    PinnedInputStage(const PinnedInputStage&) = delete;
    PinnedInputStage& operator=(const PinnedInputStage&) = delete;

    float* stage(std::span<const float> host) override;

  private:
    struct Slot {
        float* pinned = nullptr;
        float* device = nullptr;
        cudaEvent_t copied = nullptr;    // on the copy stream, after the slot's copy
        cudaEvent_t released = nullptr;  // on the compute stream, after its batch's work
    };
    void release() noexcept;

    GpuContext& ctx_;
    std::size_t floats_;
    cudaStream_t copy_stream_ = nullptr;
    std::array<Slot, 2> slots_;
    std::size_t next_ = 0;  // the slot of the next batch
};

}  // namespace scalelab::cuda
