#pragma once

#include <cuda_runtime_api.h>

#include "backend/fence.h"

namespace scalelab::cuda {

// An event on one stream of one GPU (see Fence): a backend's compute stream, or a rank's NCCL
// communication stream. mark() records it on the stream; wait() waits for it on the host without
// spinning a core (blocking sync); another stream waits for it on the GPU through event()
// (cudaStreamWaitEvent), which takes the event as last recorded when it is called: a later
// mark() does not change what an earlier wait waits for.
class StreamFence final : public Fence {
  public:
    // Creates the event on `device`, which the calling thread has current afterwards.
    StreamFence(int device, cudaStream_t stream);
    ~StreamFence() override;
    StreamFence(const StreamFence&) = delete;
    StreamFence& operator=(const StreamFence&) = delete;

    void mark() override;
    void wait() override;
    cudaEvent_t event() const { return event_; }
    cudaStream_t stream() const { return stream_; }

  private:
    int device_;
    cudaStream_t stream_;
    cudaEvent_t event_ = nullptr;
};

}  // namespace scalelab::cuda
