#include "backend/cpu/cpu_backend.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

#include "backend/cpu/cpu_kernels.h"
#include "error.h"
#include "optim/make_optimizer.h"

namespace scalelab::cpu {

namespace {

// The CPU's "device" memory is host memory: uploads, downloads and staged batches are copies.
void copy_floats(std::span<const float> from, float* to) {
    if (from.empty())
        return;  // memcpy from a null pointer is undefined even for 0 bytes
    std::memcpy(to, from.data(), from.size_bytes());
}

}  // namespace

int available_cores() {
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        return std::max(1, CPU_COUNT(&set));
    return 1;
}

CpuBackend::CpuBackend(int threads) : threads_(threads > 0 ? threads : available_cores()) {
    omp_set_num_threads(threads_);
}

DeviceBuffer CpuBackend::allocate(std::size_t floats) {
    const std::size_t bytes = ((std::max<std::size_t>(floats, 1) * sizeof(float) + 63) / 64) * 64;
    auto* p = static_cast<float*>(std::aligned_alloc(64, bytes));
    if (p == nullptr)
        throw Error(ErrorKind::OutOfMemory, "could not allocate " + std::to_string(bytes >> 20) +
                                                " MiB: use a smaller batch or model");
    std::memset(p, 0, bytes);
    return DeviceBuffer(p, floats, [](float* q) { std::free(q); });
}

void CpuBackend::upload(std::span<const float> host, float* device) {
    copy_floats(host, device);
}

void CpuBackend::download(const float* device, std::span<float> host) {
    copy_floats({device, host.size()}, host.data());
}

std::unique_ptr<Conv2dKernel> CpuBackend::conv2d(const Conv2dConfig& cfg, const TensorDesc& x) {
    return make_conv2d(ctx_, cfg, x);
}
std::unique_ptr<LinearKernel> CpuBackend::linear(const LinearConfig& cfg, const TensorDesc& x) {
    return make_linear(ctx_, cfg, x);
}
std::unique_ptr<BatchNormKernel> CpuBackend::batch_norm(const BatchNormConfig& cfg,
                                                        const TensorDesc& x, bool training) {
    return make_batch_norm(ctx_, cfg, x, training);
}
std::unique_ptr<SyncBatchNormKernel> CpuBackend::sync_batch_norm(const BatchNormConfig& cfg,
                                                                 const TensorDesc& x) {
    return make_sync_batch_norm(ctx_, cfg, x);
}
std::unique_ptr<ReluKernel> CpuBackend::relu(const TensorDesc& x) {
    return make_relu(ctx_, x);
}
std::unique_ptr<PoolKernel> CpuBackend::pool(const PoolConfig& cfg, const TensorDesc& x) {
    return make_pool(ctx_, cfg, x);
}
std::unique_ptr<DropoutKernel> CpuBackend::dropout(const TensorDesc& x) {
    return make_dropout(ctx_, x);
}
std::unique_ptr<AddKernel> CpuBackend::add(const TensorDesc& a, const TensorDesc& b) {
    return make_add(ctx_, a, b);
}
std::unique_ptr<ReorderKernel> CpuBackend::to_plain(const TensorDesc& x) {
    return make_to_plain(ctx_, x);
}
std::unique_ptr<SoftmaxCrossEntropyKernel> CpuBackend::softmax_cross_entropy(
    const TensorDesc& logits, float label_smoothing) {
    return make_softmax_cross_entropy(logits, label_smoothing);
}

std::unique_ptr<optim::Optimizer> CpuBackend::optimizer(const RunSpec& spec,
                                                        std::vector<optim::ParamSegment> segments) {
    return optim::make_optimizer(spec, std::move(segments));
}

void CpuBackend::copy(std::span<const float> from, std::span<float> to) {
    std::copy(from.begin(), from.end(), to.begin());
}

void CpuBackend::add_to(std::span<const float> from, std::span<float> to) {
    for (std::size_t i = 0; i < from.size(); ++i)
        to[i] += from[i];
}

void CpuBackend::accumulate_squared_norm(std::span<const float> v) {
    double sq = 0;
    for (float x : v)
        sq += double(x) * x;
    squared_norm_ += sq;
}

double CpuBackend::take_squared_norm() {
    return std::exchange(squared_norm_, 0.0);
}

namespace {

// A CPU kernel's work is done when its call returns, so one buffer serves every batch: by the
// next stage() the previous batch's work is over.
class CpuInputStage final : public InputStage {
  public:
    explicit CpuInputStage(DeviceBuffer buffer) : buffer_(std::move(buffer)) {}
    float* stage(std::span<const float> host) override {
        require_stage_room(host.size(), buffer_.size());
        copy_floats(host, buffer_.data());
        return buffer_.data();
    }

  private:
    DeviceBuffer buffer_;
};

// A CPU kernel's work is done when its call returns, so the time the work before a point was
// done is the host clock there.
class HostClockTimestamp final : public Timestamp {
  public:
    void mark() override { at_ = std::chrono::steady_clock::now(); }
    double seconds_since(Timestamp& earlier) override {
        const auto* start = dynamic_cast<const HostClockTimestamp*>(&earlier);
        if (start == nullptr)
            throw Error(ErrorKind::Internal, "a CPU timestamp was compared with another backend's");
        return std::chrono::duration<double>(at_ - start->at_).count();
    }

  private:
    std::chrono::steady_clock::time_point at_;
};

}  // namespace

std::unique_ptr<InputStage> CpuBackend::input_stage(std::size_t floats) {
    return std::make_unique<CpuInputStage>(allocate(floats));
}

std::unique_ptr<Fence> CpuBackend::make_fence() {
    return std::make_unique<DoneFence>();  // its work is done when its call returns
}

void CpuBackend::wait_for(Fence& fence) {
    fence.wait();
}

std::unique_ptr<Timestamp> CpuBackend::make_timestamp() {
    return std::make_unique<HostClockTimestamp>();
}

}  // namespace scalelab::cpu
