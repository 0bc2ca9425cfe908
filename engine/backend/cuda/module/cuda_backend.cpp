#include "backend/cuda/module/cuda_backend.h"

#include "backend/cuda/module/fused_optimizers.h"
#include "backend/cuda/module/gpu_kernels.h"
#include "backend/cuda/module/library_errors.h"
#include "backend/cuda/module/pinned_input_stage.h"
#include "backend/cuda/module/stream_fence.h"
#include "backend/cuda/module/stream_timestamp.h"

namespace scalelab::cuda {

DeviceBuffer CudaBackend::allocate(std::size_t floats) {
    return ctx_.allocate(floats);
}

void CudaBackend::upload(std::span<const float> host, float* device) {
    check_cuda(cudaMemcpyAsync(device, host.data(), host.size_bytes(), cudaMemcpyHostToDevice,
                               ctx_.stream()),
               "cudaMemcpyAsync to the GPU");
    ctx_.synchronize();
}

void CudaBackend::download(const float* device, std::span<float> host) {
    check_cuda(cudaMemcpyAsync(host.data(), device, host.size_bytes(), cudaMemcpyDeviceToHost,
                               ctx_.stream()),
               "cudaMemcpyAsync from the GPU");
    ctx_.synchronize();
}

std::unique_ptr<InputStage> CudaBackend::input_stage(std::size_t floats) {
    return std::make_unique<PinnedInputStage>(ctx_, floats);
}

std::unique_ptr<Conv2dKernel> CudaBackend::conv2d(const Conv2dConfig& config, const TensorDesc& x) {
    return make_conv2d(ctx_, config, x);
}

std::unique_ptr<LinearKernel> CudaBackend::linear(const LinearConfig& config, const TensorDesc& x) {
    return make_linear(ctx_, config, x);
}

std::unique_ptr<BatchNormKernel> CudaBackend::batch_norm(const BatchNormConfig& config,
                                                         const TensorDesc& x, bool training) {
    return make_batch_norm(ctx_, config, x, training);
}

std::unique_ptr<SyncBatchNormKernel> CudaBackend::sync_batch_norm(const BatchNormConfig& config,
                                                                  const TensorDesc& x) {
    return make_sync_batch_norm(ctx_, config, x);
}

std::unique_ptr<ReluKernel> CudaBackend::relu(const TensorDesc& x) {
    return make_relu(ctx_, x);
}

std::unique_ptr<PoolKernel> CudaBackend::pool(const PoolConfig& config, const TensorDesc& x) {
    return make_pool(ctx_, config, x);
}

std::unique_ptr<DropoutKernel> CudaBackend::dropout(const TensorDesc& x) {
    return make_dropout(ctx_, x);
}

std::unique_ptr<AddKernel> CudaBackend::add(const TensorDesc& a, const TensorDesc& b) {
    return make_add(ctx_, a, b);
}

std::unique_ptr<ReorderKernel> CudaBackend::to_plain(const TensorDesc& x) {
    return make_to_plain(ctx_, x);
}

std::unique_ptr<SoftmaxCrossEntropyKernel> CudaBackend::softmax_cross_entropy(
    const TensorDesc& logits, float label_smoothing) {
    return make_softmax_cross_entropy(ctx_, logits, label_smoothing);
}

std::unique_ptr<optim::Optimizer> CudaBackend::optimizer(
    const RunSpec& spec, std::vector<optim::ParamSegment> segments) {
    return make_fused_optimizer(spec, std::move(segments), ctx_.stream());
}

void CudaBackend::copy(std::span<const float> from, std::span<float> to) {
    check_cuda(cudaMemcpyAsync(to.data(), from.data(), from.size_bytes(), cudaMemcpyDeviceToDevice,
                               ctx_.stream()),
               "cudaMemcpyAsync on the GPU");
}

void CudaBackend::add_to(std::span<const float> from, std::span<float> to) {
    add_vector(ctx_, from, to);
}

void CudaBackend::accumulate_squared_norm(std::span<const float> v) {
    squared_norm_.add(v);
}

double CudaBackend::take_squared_norm() {
    return squared_norm_.take();
}

std::unique_ptr<Fence> CudaBackend::make_fence() {
    return std::make_unique<StreamFence>(ctx_.device(), ctx_.stream());
}

void CudaBackend::wait_for(Fence& fence) {
    // A GPU's fence (this GPU's, or a communication stream's of it): the compute stream waits
    // for its event, the host does not.
    if (const auto* event = dynamic_cast<const StreamFence*>(&fence)) {
        check_cuda(cudaStreamWaitEvent(ctx_.stream(), event->event(), 0), "cudaStreamWaitEvent");
        return;
    }
    fence.wait();
}

std::unique_ptr<Timestamp> CudaBackend::make_timestamp() {
    return std::make_unique<StreamTimestamp>(ctx_);
}

void require_plain(const TensorDesc& x, const char* kernel) {
    if (!x.plain())
        throw Error(ErrorKind::Internal, std::string("the GPU ") + kernel + " kernel was given a " +
                                             x.layout->name() +
                                             " tensor; the CUDA backend keeps every tensor NCHW");
}

}  // namespace scalelab::cuda
