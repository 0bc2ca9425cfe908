#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include "backend/cuda/cuda_error.h"

namespace scalelab::cuda {

// `count` values of T in GPU memory of the current device, for the fused optimisers' state and
// segment tables (GpuContext::allocate gives floats only, and the optimisers have no context).
template <class T>
class DeviceArray {
  public:
    DeviceArray() = default;

    // Zero-filled, in the order of `stream`.
    DeviceArray(std::size_t count, cudaStream_t stream) : DeviceArray(count) {
        if (count > 0) {
            check_cuda(cudaMemsetAsync(data(), 0, bytes(), stream), "cudaMemsetAsync");
        }
    }

    // A copy of `host` (pageable memory: a std::vector), in the order of `stream`, complete when
    // this returns, so that `host` may go at once. For an asynchronous copy from pageable memory
    // CUDA says only that it "might be synchronous" ("API synchronization behavior"), so the
    // stream is waited for: once, when an optimiser is made.
    DeviceArray(std::span<const T> host, cudaStream_t stream) : DeviceArray(host.size()) {
        if (!host.empty()) {
            check_cuda(
                cudaMemcpyAsync(data(), host.data(), bytes(), cudaMemcpyHostToDevice, stream),
                "cudaMemcpyAsync to the GPU");
            check_cuda(cudaStreamSynchronize(stream), "copying an optimiser's table to the GPU");
        }
    }

    T* data() const { return data_.get(); }
    std::size_t size() const { return size_; }

  private:
    explicit DeviceArray(std::size_t count) : size_(count) {
        if (count == 0) {
            return;
        }
        void* p = nullptr;
        check_cuda(cudaMalloc(&p, bytes()), "cudaMalloc of " + std::to_string(bytes()) + " bytes");
        data_.reset(static_cast<T*>(p));
    }

    std::size_t bytes() const { return size_ * sizeof(T); }

    struct Free {
        // A destructor cannot report; cudaFree fails only when the context is gone.
        void operator()(T* p) const { cudaFree(p); }
    };
    std::unique_ptr<T, Free> data_;
    std::size_t size_ = 0;
};

}  // namespace scalelab::cuda
