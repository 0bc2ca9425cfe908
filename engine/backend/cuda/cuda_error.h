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
