#include "backend/cuda/module/pinned_input_stage.h"

#include <cstring>
#include <string>

#include "backend/cuda/module/library_errors.h"

namespace scalelab::cuda {

PinnedInputStage::PinnedInputStage(GpuContext& ctx, std::size_t floats)
    : ctx_(ctx), floats_(floats) {
    const std::size_t bytes = (floats == 0 ? 1 : floats) * sizeof(float);
    try {
        check_cuda(cudaStreamCreateWithFlags(&copy_stream_, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
        for (Slot& slot : slots_) {
            void* pinned = nullptr;
            check_cuda(cudaMallocHost(&pinned, bytes),
                       "cudaMallocHost of " + std::to_string(bytes) + " bytes of input");
            slot.pinned = static_cast<float*>(pinned);
            void* device = nullptr;
            check_cuda(cudaMalloc(&device, bytes),
                       "cudaMalloc of " + std::to_string(bytes) + " bytes of input");
            slot.device = static_cast<float*>(device);
            // Blocking sync: the rare host wait (a pinned buffer still being copied) sleeps.
            check_cuda(cudaEventCreateWithFlags(&slot.copied,
                                                cudaEventDisableTiming | cudaEventBlockingSync),
                       "cudaEventCreateWithFlags");
            check_cuda(cudaEventCreateWithFlags(&slot.released, cudaEventDisableTiming),
                       "cudaEventCreateWithFlags");
        }
    } catch (...) {
        release();  // no destructor runs for a constructor that throws
        throw;
    }
}

PinnedInputStage::~PinnedInputStage() {
    release();
}

void PinnedInputStage::release() noexcept {
    // The kernels of the last batches may still read the device buffers, and a copy may still
    // read a pinned one: wait for both streams before anything goes. Destructors cannot report.
    if (copy_stream_ != nullptr)
        cudaStreamSynchronize(copy_stream_);
    cudaStreamSynchronize(ctx_.stream());
    for (Slot& slot : slots_) {
        if (slot.released != nullptr)
            cudaEventDestroy(slot.released);
        if (slot.copied != nullptr)
            cudaEventDestroy(slot.copied);
        if (slot.device != nullptr)
            cudaFree(slot.device);
        if (slot.pinned != nullptr)
            cudaFreeHost(slot.pinned);
        slot = Slot{};
    }
    if (copy_stream_ != nullptr)
        cudaStreamDestroy(copy_stream_);
    copy_stream_ = nullptr;
}

float* PinnedInputStage::stage(std::span<const float> host) {
    require_stage_room(host.size(), floats_);
    Slot& slot = slots_[next_];
    Slot& other = slots_[next_ ^ 1];
    next_ ^= 1;
    check_cuda(cudaEventSynchronize(slot.copied), "copying an input batch to the GPU");
    if (!host.empty())
        std::memcpy(slot.pinned, host.data(), host.size_bytes());
    check_cuda(cudaEventRecord(other.released, ctx_.stream()), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(copy_stream_, slot.released, 0), "cudaStreamWaitEvent");
    check_cuda(cudaMemcpyAsync(slot.device, slot.pinned, host.size_bytes(), cudaMemcpyHostToDevice,
                               copy_stream_),
               "cudaMemcpyAsync of an input batch to the GPU");
    check_cuda(cudaEventRecord(slot.copied, copy_stream_), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(ctx_.stream(), slot.copied, 0), "cudaStreamWaitEvent");
    return slot.device;
}

}  // namespace scalelab::cuda
