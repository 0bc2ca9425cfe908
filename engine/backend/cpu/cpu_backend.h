#pragma once

#include "backend/backend.h"
#include "backend/cpu/dnnl_util.h"

namespace scalelab::cpu {

// A CPU device: a worker thread with its own oneDNN engine and `threads` OpenMP threads.
// Construct it on the thread that will use it: the OpenMP thread count is a per-thread
// setting, and oneDNN (as Debian builds it) runs a primitive only on the thread that made it.
class CpuBackend final : public Backend {
  public:
    explicit CpuBackend(int threads);
    std::string name() const override { return "cpu"; }
    int threads() const { return threads_; }

    DeviceBuffer allocate(std::size_t floats) override;
    void upload(std::span<const float> host, float* device) override;
    void download(const float* device, std::span<float> host) override;
    std::unique_ptr<InputStage> input_stage(std::size_t floats) override;

    std::unique_ptr<Conv2dKernel> conv2d(const Conv2dConfig&, const TensorDesc& x) override;
    std::unique_ptr<LinearKernel> linear(const LinearConfig&, const TensorDesc& x) override;
    std::unique_ptr<BatchNormKernel> batch_norm(const BatchNormConfig&, const TensorDesc& x,
                                                bool training) override;
    std::unique_ptr<SyncBatchNormKernel> sync_batch_norm(const BatchNormConfig&,
                                                         const TensorDesc& x) override;
    std::unique_ptr<ReluKernel> relu(const TensorDesc& x) override;
    std::unique_ptr<PoolKernel> pool(const PoolConfig&, const TensorDesc& x) override;
    std::unique_ptr<DropoutKernel> dropout(const TensorDesc& x) override;
    std::unique_ptr<AddKernel> add(const TensorDesc& a, const TensorDesc& b) override;
    std::unique_ptr<ReorderKernel> to_plain(const TensorDesc& x) override;
    std::unique_ptr<SoftmaxCrossEntropyKernel> softmax_cross_entropy(
        const TensorDesc& logits, float label_smoothing) override;

    std::unique_ptr<optim::Optimizer> optimizer(const RunSpec& spec,
                                                std::vector<optim::ParamSegment> segments) override;
    void copy(std::span<const float> from, std::span<float> to) override;
    void add_to(std::span<const float> from, std::span<float> to) override;
    void accumulate_squared_norm(std::span<const float> v) override;
    double take_squared_norm() override;
    std::unique_ptr<Fence> make_fence() override;
    void wait_for(Fence& fence) override;
    std::unique_ptr<Timestamp> make_timestamp() override;

  private:
    int threads_;
    DnnlContext ctx_;
    double squared_norm_ = 0;
};

// The number of cores this process may use (its CPU affinity), at least 1.
int available_cores();

}  // namespace scalelab::cpu
