#pragma once

#include "backend/backend.h"
#include "backend/cuda/module/gpu_context.h"
#include "backend/cuda/module/vector_ops.h"

namespace scalelab::cuda {

// A GPU device: its context (device, stream, cuDNN and cuBLAS handles) and the kernels of
// gpu_kernels.h. upload() and download() wait for the copy, so the host buffer may be reused at
// once; kernels do not wait (see GpuContext).
class CudaBackend final : public Backend {
  public:
    explicit CudaBackend(const GpuBackendOptions& options) : ctx_(options), squared_norm_(ctx_) {
        load_vector_kernels();
    }
    std::string name() const override { return "cuda"; }

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
    GpuContext ctx_;
    SquaredNormAccumulator squared_norm_;
};

}  // namespace scalelab::cuda
