#include "backend/cuda/module/gpu_context.h"

#include <algorithm>
#include <string>

#include "backend/cuda/cuda_devices.h"
#include "backend/cuda/module/library_errors.h"

namespace scalelab::cuda {

namespace {

void free_device(float* p) {
    cudaFree(p);  // a destructor cannot report; a failing cudaFree means the context is gone
}

}  // namespace

GpuContext::GpuContext(const GpuBackendOptions& options) : options_(options) {
    require_gpus({options.gpu});
    check_cuda(cudaSetDevice(options.gpu), "cudaSetDevice");
    try {
        check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                   "cudaStreamCreateWithFlags");
        check_cudnn(cudnnCreate(&cudnn_), "cudnnCreate");
        check_cudnn(cudnnSetStream(cudnn_, stream_), "cudnnSetStream");
        check_cublas(cublasCreate(&cublas_), "cublasCreate");
        check_cublas(cublasSetStream(cublas_, stream_), "cublasSetStream");
        // TF32 only when asked for. Default math computes float GEMMs in float (TF32 and the
        // BF16x9 emulation each need a math mode of their own), so results match the CPU
        // backend within float rounding, as PyTorch's do with TF32 off; pedantic math would add
        // nothing to that but may run slower.
        check_cublas(cublasSetMathMode(
                         cublas_, options.tf32 ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH),
                     "cublasSetMathMode");
    } catch (...) {
        release();
        throw;
    }
}

GpuContext::~GpuContext() {
    release();
}

void GpuContext::release() {
    // The stream's last kernels may still use the handles' internal workspaces: wait for them
    // before the handles go.
    if (stream_ != nullptr)
        cudaStreamSynchronize(stream_);
    if (cublas_ != nullptr)
        cublasDestroy(cublas_);
    if (cudnn_ != nullptr)
        cudnnDestroy(cudnn_);
    if (stream_ != nullptr)
        cudaStreamDestroy(stream_);
    cublas_ = nullptr;
    cudnn_ = nullptr;
    stream_ = nullptr;
}

DeviceBuffer GpuContext::allocate(std::size_t floats) {
    void* p = nullptr;
    const std::size_t bytes = (floats == 0 ? 1 : floats) * sizeof(float);
    check_cuda(cudaMalloc(&p, bytes), "cudaMalloc of " + std::to_string(bytes) + " bytes");
    DeviceBuffer buffer(static_cast<float*>(p), floats, &free_device);
    check_cuda(cudaMemsetAsync(p, 0, bytes, stream_), "cudaMemsetAsync");
    return buffer;
}

void GpuContext::synchronize() {
    check_cuda(cudaStreamSynchronize(stream_), "a GPU kernel");
}

void GpuContext::reserve_workspace(std::size_t bytes) {
    if (bytes <= workspace_bytes())
        return;
    // Earlier kernels' queued work may still use the old buffer; free it before the larger one
    // is allocated, so that both never exist at once.
    synchronize();
    workspace_ = DeviceBuffer{};
    workspace_ = allocate((bytes + sizeof(float) - 1) / sizeof(float));
}

std::size_t GpuContext::workspace_limit() const {
    std::size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    return std::max(workspace_bytes(), free / 4);
}

void check_launch(const char* kernel) {
    check_cuda(cudaGetLastError(), std::string("launching ") + kernel);
}

void load_kernel(const void* kernel, const char* name) {
    // Asking for a kernel's attributes loads it (as NCCL loads its own kernels at its start).
    cudaFuncAttributes attributes{};
    check_cuda(cudaFuncGetAttributes(&attributes, kernel), std::string("loading ") + name);
}

}  // namespace scalelab::cuda
