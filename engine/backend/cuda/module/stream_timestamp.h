#pragma once

#include <cuda_runtime_api.h>

#include "backend/cuda/module/gpu_context.h"
#include "backend/timestamp.h"

namespace scalelab::cuda {

// A timing event on the context's stream (see Timestamp): recorded by mark(); seconds_since()
// waits for it and returns cudaEventElapsedTime from the earlier one.
class StreamTimestamp final : public Timestamp {
  public:
    explicit StreamTimestamp(GpuContext& ctx);
    ~StreamTimestamp() override;
    StreamTimestamp(const StreamTimestamp&) = delete;
    StreamTimestamp& operator=(const StreamTimestamp&) = delete;

    void mark() override;
    double seconds_since(Timestamp& earlier) override;

  private:
    GpuContext& ctx_;
    cudaEvent_t event_ = nullptr;
};

}  // namespace scalelab::cuda
