#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/fence.h"
#include "backend/input_stage.h"
#include "backend/kernels.h"
#include "backend/timestamp.h"
#include "optim/optimizer.h"
#include "optim/parameter_segment.h"

namespace scalelab {

struct RunSpec;

// Device memory owned by a backend; movable, freed by the backend that made it.
class DeviceBuffer {
  public:
    using Deleter = void (*)(float*);
    DeviceBuffer() = default;
    DeviceBuffer(float* data, std::size_t size, Deleter deleter)
        : data_(data, deleter), size_(size) {}
    float* data() const { return data_.get(); }
    std::size_t size() const { return size_; }  // in floats
    std::span<float> span() const { return {data_.get(), size_}; }

  private:
    std::unique_ptr<float, Deleter> data_{nullptr, nullptr};
    std::size_t size_ = 0;
};

// One device's compute: its memory and its kernels. A backend object belongs to one worker
// thread: it is created, used and destroyed there (oneDNN primitives must run on the thread
// that made them; a CUDA device is current per thread).
class Backend {
  public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;

    virtual DeviceBuffer allocate(std::size_t floats) = 0;  // zero-filled
    virtual void upload(std::span<const float> host, float* device) = 0;
    virtual void download(const float* device, std::span<float> host) = 0;
    // A stage for batches of up to `floats` floats, its memory allocated now.
    virtual std::unique_ptr<InputStage> input_stage(std::size_t floats) = 0;

    virtual std::unique_ptr<Conv2dKernel> conv2d(const Conv2dConfig&, const TensorDesc& x) = 0;
    virtual std::unique_ptr<LinearKernel> linear(const LinearConfig&, const TensorDesc& x) = 0;
    virtual std::unique_ptr<BatchNormKernel> batch_norm(const BatchNormConfig&, const TensorDesc& x,
                                                        bool training) = 0;
    // Training only: batch norm with statistics handed in (see SyncBatchNormKernel).
    virtual std::unique_ptr<SyncBatchNormKernel> sync_batch_norm(const BatchNormConfig&,
                                                                 const TensorDesc& x) = 0;
    virtual std::unique_ptr<ReluKernel> relu(const TensorDesc& x) = 0;
    virtual std::unique_ptr<PoolKernel> pool(const PoolConfig&, const TensorDesc& x) = 0;
    virtual std::unique_ptr<DropoutKernel> dropout(const TensorDesc& x) = 0;
    virtual std::unique_ptr<AddKernel> add(const TensorDesc& a, const TensorDesc& b) = 0;
    virtual std::unique_ptr<ReorderKernel> to_plain(const TensorDesc& x) = 0;
    virtual std::unique_ptr<SoftmaxCrossEntropyKernel> softmax_cross_entropy(
        const TensorDesc& logits, float label_smoothing) = 0;

    // The optimiser spec.optimizer names, for flat buffers of this backend's memory.
    virtual std::unique_ptr<optim::Optimizer> optimizer(
        const RunSpec& spec, std::vector<optim::ParamSegment> segments) = 0;

    // Vector work on flat buffers of this backend's memory (gradients and their accumulation),
    // in order with the kernels. add_to: to += from.
    virtual void copy(std::span<const float> from, std::span<float> to) = 0;
    virtual void add_to(std::span<const float> from, std::span<float> to) = 0;
    // Adds sum_i v_i^2 (in double) to the backend's running sum, without waiting for it;
    // take_squared_norm() waits, returns the sum and starts it again at 0.
    virtual void accumulate_squared_norm(std::span<const float> v) = 0;
    virtual double take_squared_norm() = 0;

    virtual std::unique_ptr<Fence> make_fence() = 0;
    // The work given to this backend from now on starts once `fence`'s work is done: a GPU's
    // stream waits for the fence's event on the GPU (the host goes on at once); anything else
    // waits on the host. How the optimiser follows the last gradient all-reduce.
    virtual void wait_for(Fence& fence) = 0;
    virtual std::unique_ptr<Timestamp> make_timestamp() = 0;
};

}  // namespace scalelab
