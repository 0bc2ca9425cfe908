#include "backend/cuda/module/stream_timestamp.h"

#include "backend/cuda/cuda_error.h"
#include "error.h"

namespace scalelab::cuda {

StreamTimestamp::StreamTimestamp(GpuContext& ctx) : ctx_(ctx) {
    // Timing on (no cudaEventDisableTiming): cudaEventElapsedTime needs it. No blocking sync:
    // the step's one wait is its worker's, which has nothing else to do, and waits as
    // cudaStreamSynchronize would (the device's schedule: spinning while cores are spare), so
    // the next step starts as soon as the GPU is done.
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDefault), "cudaEventCreateWithFlags");
}

StreamTimestamp::~StreamTimestamp() {
    cudaEventDestroy(event_);
}

void StreamTimestamp::mark() {
    check_cuda(cudaEventRecord(event_, ctx_.stream()), "cudaEventRecord");
}

double StreamTimestamp::seconds_since(Timestamp& earlier) {
    const auto* start = dynamic_cast<const StreamTimestamp*>(&earlier);
    if (start == nullptr || &start->ctx_ != &ctx_)
        throw Error(ErrorKind::Internal,
                    "a GPU timestamp was compared with one of another stream or backend");
    // Waiting for this event waits for the earlier one too: the stream reached it first.
    check_cuda(cudaEventSynchronize(event_), "a GPU kernel");
    float ms = 0;
    check_cuda(cudaEventElapsedTime(&ms, start->event_, event_), "cudaEventElapsedTime");
    return ms / 1000.0;
}

}  // namespace scalelab::cuda
