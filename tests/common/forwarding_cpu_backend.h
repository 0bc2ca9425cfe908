#pragma once

// A backend that passes every call on to a CPU backend of one thread: a test derives from it and
// overrides only what it watches or changes (what makes kernels, the timestamps).

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/cpu/cpu_backend.h"

namespace scalelab::testing {

class ForwardingCpuBackend : public Backend {
  public:
    std::string name() const override { return "cpu (forwarded)"; }

    DeviceBuffer allocate(std::size_t floats) override { return cpu_.allocate(floats); }
    void upload(std::span<const float> host, float* device) override { cpu_.upload(host, device); }
    void download(const float* device, std::span<float> host) override {
        cpu_.download(device, host);
    }
    std::unique_ptr<InputStage> input_stage(std::size_t floats) override {
        return cpu_.input_stage(floats);
    }
    std::unique_ptr<Conv2dKernel> conv2d(const Conv2dConfig& c, const TensorDesc& x) override {
        return cpu_.conv2d(c, x);
    }
    std::unique_ptr<LinearKernel> linear(const LinearConfig& c, const TensorDesc& x) override {
        return cpu_.linear(c, x);
    }
    std::unique_ptr<BatchNormKernel> batch_norm(const BatchNormConfig& c, const TensorDesc& x,
                                                bool training) override {
        return cpu_.batch_norm(c, x, training);
    }
    std::unique_ptr<SyncBatchNormKernel> sync_batch_norm(const BatchNormConfig& c,
                                                         const TensorDesc& x) override {
        return cpu_.sync_batch_norm(c, x);
    }
    std::unique_ptr<ReluKernel> relu(const TensorDesc& x) override { return cpu_.relu(x); }
    std::unique_ptr<PoolKernel> pool(const PoolConfig& c, const TensorDesc& x) override {
        return cpu_.pool(c, x);
    }
    std::unique_ptr<DropoutKernel> dropout(const TensorDesc& x) override { return cpu_.dropout(x); }
    std::unique_ptr<AddKernel> add(const TensorDesc& a, const TensorDesc& b) override {
        return cpu_.add(a, b);
    }
    std::unique_ptr<ReorderKernel> to_plain(const TensorDesc& x) override {
        return cpu_.to_plain(x);
    }
    std::unique_ptr<SoftmaxCrossEntropyKernel> softmax_cross_entropy(const TensorDesc& logits,
                                                                     float smoothing) override {
        return cpu_.softmax_cross_entropy(logits, smoothing);
    }
    std::unique_ptr<optim::Optimizer> optimizer(
        const RunSpec& spec, std::vector<optim::ParamSegment> segments) override {
        return cpu_.optimizer(spec, std::move(segments));
    }
    void copy(std::span<const float> from, std::span<float> to) override { cpu_.copy(from, to); }
    void add_to(std::span<const float> from, std::span<float> to) override {
        cpu_.add_to(from, to);
    }
    void accumulate_squared_norm(std::span<const float> v) override {
        cpu_.accumulate_squared_norm(v);
    }
    double take_squared_norm() override { return cpu_.take_squared_norm(); }
    std::unique_ptr<Fence> make_fence() override { return cpu_.make_fence(); }
    void wait_for(Fence& fence) override { cpu_.wait_for(fence); }
    std::unique_ptr<Timestamp> make_timestamp() override { return cpu_.make_timestamp(); }

  private:
    cpu::CpuBackend cpu_{1};
};

}  // namespace scalelab::testing
