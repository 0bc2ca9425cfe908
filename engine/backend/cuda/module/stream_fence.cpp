#include "backend/cuda/module/stream_fence.h"

#include "backend/cuda/cuda_error.h"

namespace scalelab::cuda {

StreamFence::StreamFence(int device, cudaStream_t stream) : device_(device), stream_(stream) {
    // An event belongs to the GPU current when it is made, and must be the stream's.
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming | cudaEventBlockingSync),
               "cudaEventCreateWithFlags");
}

StreamFence::~StreamFence() {
    cudaEventDestroy(event_);
}

void StreamFence::mark() {
    check_cuda(cudaEventRecord(event_, stream_), "cudaEventRecord");
}

void StreamFence::wait() {
    // The waiting thread (the gradient reducer's) may never have chosen a GPU: without this,
    // its first CUDA call would create a context on GPU 0, whether the run uses it or not.
    check_cuda(cudaSetDevice(device_), "cudaSetDevice");
    check_cuda(cudaEventSynchronize(event_), "a GPU kernel");
}

}  // namespace scalelab::cuda
