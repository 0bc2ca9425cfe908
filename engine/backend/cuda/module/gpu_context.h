#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>

#include "backend/backend.h"
#include "backend/gpu_runtime.h"

namespace scalelab::cuda {

// One GPU as one worker thread sees it: the device made current on that thread, the compute
// stream every kernel of the backend runs on, and cuDNN and cuBLAS handles bound to that
// stream. Kernels enqueue their work on stream() and return without waiting; a call that hands
// numbers back to the host (batch-norm moments, download) waits for the stream first, except the
// loss's result(), which waits for its own numbers only.
// Create it on the thread that uses it: a CUDA device is current per thread.
class GpuContext {
  public:
    // Throws Error(InvalidSpec) when options.gpu is not a GPU of this machine (with the reason
    // when none can be used) and the libraries' errors otherwise.
    explicit GpuContext(const GpuBackendOptions& options);
    ~GpuContext();
    GpuContext(const GpuContext&) = delete;
    GpuContext& operator=(const GpuContext&) = delete;

    int device() const { return options_.gpu; }
    bool tf32() const { return options_.tf32; }
    bool deterministic() const { return options_.deterministic; }
    cudaStream_t stream() const { return stream_; }
    cudnnHandle_t cudnn() const { return cudnn_; }
    cublasHandle_t cublas() const { return cublas_; }

    // GPU memory of `floats` floats, zero-filled (in stream order). Kernels allocate all they
    // need when they are created, never while a step runs.
    DeviceBuffer allocate(std::size_t floats);
    // Waits until everything enqueued on the stream has run; throws the first error it hit.
    void synchronize();

    // The one workspace all the context's convolutions share: their calls run one after another
    // on the stream, so one buffer, as large as the largest need, serves them all (a workspace
    // per kernel would hold the sum). reserve_workspace grows it to at least `bytes` when a
    // kernel is made (never while a step runs); the buffer may move then, so a kernel reads
    // workspace() at each call. workspace_limit() is the most a new kernel's algorithm may ask
    // for: what is reserved, or a quarter of the GPU's free memory when that is more, leaving
    // the rest to the activations and the kernels made after it.
    void reserve_workspace(std::size_t bytes);
    void* workspace() const { return workspace_.data(); }
    std::size_t workspace_bytes() const { return workspace_.size() * sizeof(float); }
    std::size_t workspace_limit() const;

  private:
    void release();  // the handles and the stream that exist, in reverse order

    GpuBackendOptions options_;
    cudaStream_t stream_ = nullptr;
    cudnnHandle_t cudnn_ = nullptr;
    cublasHandle_t cublas_ = nullptr;
    DeviceBuffer workspace_;
};

// Launch shape of an elementwise kernel over n values: kThreadsPerBlock threads per block, a
// grid that covers n (grid-stride loops take the rest past the grid limit).
inline constexpr int kThreadsPerBlock = 256;
inline unsigned int blocks_for(std::size_t n) {
    const std::size_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
    constexpr std::size_t kMaxBlocks = 65535;
    return static_cast<unsigned int>(blocks < 1 ? 1 : (blocks > kMaxBlocks ? kMaxBlocks : blocks));
}

// Throws Error(Internal) unless the kernel launch just made on this thread succeeded (a bad
// launch configuration shows at once; faults inside the kernel show at the next synchronise).
void check_launch(const char* kernel);

// Loads `kernel` into the current device's context now rather than at its first launch. CUDA
// loads kernels lazily (the default since CUDA 12.2), and loading one may allocate GPU memory
// and wait for the whole device ("Lazy Loading", Potential Hazards): a kernel first launched in
// a step, while a bucket's all-reduce waits for another GPU, would wait with it and allocate
// beside a running collective, which a run must not (see Replica::prepare). So whoever owns a
// kernel that a step runs but Replica::prepare's passes do not (the optimiser's passes, the
// gradient norms, the accumulation's sum) loads it when it is made.
void load_kernel(const void* kernel, const char* name);
template <class... Args>
void load_kernel(void (*kernel)(Args...), const char* name) {
    load_kernel(reinterpret_cast<const void*>(kernel), name);
}

}  // namespace scalelab::cuda
