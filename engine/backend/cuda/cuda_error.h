#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <string_view>

#include "error.h"

namespace scalelab::cuda {

// The engine error for a failed call of the CUDA runtime: OutOfMemory when memory ran out,
// Internal otherwise. The message names `call` and gives the runtime's own words, e.g.
// "cudaMalloc failed: out of memory (cudaErrorMemoryAllocation)".
Error cuda_error(cudaError_t status, std::string_view call);

// The error every GPU library's failed call becomes: "<call> failed: <what>", OutOfMemory (with
// what to make smaller) when the library ran out of memory, Internal otherwise.
Error library_call_failed(bool out_of_memory, std::string_view call, const std::string& what);

// Whether a library's account of its last failure says that GPU memory ran out. NCCL returns a
// cudaMalloc or cuMemCreate that failed inside it as ncclUnhandledCudaError, which it returns
// for every CUDA failure; only its last warning (ncclGetLastError) tells them apart, with the
// CUDA error's own words: "Cuda failure 'out of memory'", "Cuda failure 2 'out of memory'".
bool says_gpu_memory_ran_out(std::string_view last_error);

// Throws the error above unless `status` is success:
// check_cuda(cudaMalloc(&p, bytes), "cudaMalloc"). A failed call stays the thread's last error
// until it is read, so it is read here: else the next launch's check (cudaGetLastError), after
// a caller caught this error and went on, would report it as that kernel's own.
inline void check_cuda(cudaError_t status, std::string_view call) {
    if (status != cudaSuccess) {
        cudaGetLastError();
        throw cuda_error(status, call);
    }
}

}  // namespace scalelab::cuda
