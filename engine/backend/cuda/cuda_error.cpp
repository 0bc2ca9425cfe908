#include "backend/cuda/cuda_error.h"

#include <string>

namespace scalelab::cuda {

Error library_call_failed(bool out_of_memory, std::string_view call, const std::string& what) {
    std::string message = std::string(call) + " failed: " + what;
    if (out_of_memory)
        return Error(ErrorKind::OutOfMemory, message + ": use a smaller batch or model");
    return Error(ErrorKind::Internal, message);
}

Error cuda_error(cudaError_t status, std::string_view call) {
    return library_call_failed(
        status == cudaErrorMemoryAllocation, call,
        std::string(cudaGetErrorString(status)) + " (" + cudaGetErrorName(status) + ")");
}

bool says_gpu_memory_ran_out(std::string_view last_error) {
    // The runtime's and the driver's words for it are the same (cudaErrorMemoryAllocation,
    // CUDA_ERROR_OUT_OF_MEMORY); the runtime's string is the one this build was made with.
    const std::string words =
        std::string("'") + cudaGetErrorString(cudaErrorMemoryAllocation) + "'";
    return last_error.find(words) != std::string_view::npos;
}

}  // namespace scalelab::cuda
