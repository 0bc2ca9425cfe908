#include "backend/cuda/module/library_errors.h"

#include <string>

namespace scalelab::cuda {

Error cublas_error(cublasStatus_t status, std::string_view call) {
    return library_call_failed(
        status == CUBLAS_STATUS_ALLOC_FAILED, call,
        std::string(cublasGetStatusString(status)) + " (" + cublasGetStatusName(status) + ")");
}

Error cudnn_error(cudnnStatus_t status, std::string_view call) {
    // cuDNN 9 splits its old CUDNN_STATUS_ALLOC_FAILED into host and device memory.
    const bool out_of_memory = status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
                               status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED;
    std::string what = cudnnGetErrorString(status);
    // The details of the thread's last failed call, which reading them clears: what cuDNN
    // checked ("(n <= 0) || (c <= 0) || ...") or which call of its own failed.
    char details[512] = {};
    cudnnGetLastErrorString(details, sizeof details);
    if (details[0] != '\0')
        what += std::string(" (") + details + ")";
    return library_call_failed(out_of_memory, call, what);
}

Error nccl_error(ncclResult_t status, std::string_view call) {
    // NCCL's result says only "unhandled cuda error" or "unhandled system error"; its last
    // warning says which call failed and why. NCCL keeps one last warning for the process, and
    // it warns before it returns a CUDA or system error (its checks.h), so for those the
    // warning read here is this failure's.
    std::string what = ncclGetErrorString(status);
    const char* last = ncclGetLastError(nullptr);
    const std::string_view details = last != nullptr ? last : "";
    if (!details.empty())
        what += " (" + std::string(details) + ")";
    return library_call_failed(status == ncclUnhandledCudaError && says_gpu_memory_ran_out(details),
                               call, what);
}

}  // namespace scalelab::cuda
