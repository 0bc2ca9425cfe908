#pragma once

#include <cublas_v2.h>
#include <cudnn.h>
#include <nccl.h>

#include <string_view>

#include "backend/cuda/cuda_error.h"

namespace scalelab::cuda {

// The engine error for a failed call of cuBLAS, cuDNN or NCCL, as cuda_error does for the CUDA
// runtime: OutOfMemory when the library says memory ran out, Internal otherwise, naming `call`
// and giving the library's own words. cudnn_error adds the details cuDNN keeps of the thread's
// last failed call: call it right after that call, on the same thread (as check_cudnn does).
Error cublas_error(cublasStatus_t status, std::string_view call);
Error cudnn_error(cudnnStatus_t status, std::string_view call);
Error nccl_error(ncclResult_t status, std::string_view call);

// Each throws the error above unless `status` is success:
// check_cudnn(cudnnCreate(&handle), "cudnnCreate").
inline void check_cublas(cublasStatus_t status, std::string_view call) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw cublas_error(status, call);
}

inline void check_cudnn(cudnnStatus_t status, std::string_view call) {
    if (status != CUDNN_STATUS_SUCCESS)
        throw cudnn_error(status, call);
}

inline void check_nccl(ncclResult_t status, std::string_view call) {
    if (status != ncclSuccess)
        throw nccl_error(status, call);
}

}  // namespace scalelab::cuda
