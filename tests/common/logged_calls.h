#pragma once

// Backend parts that log the calls made on them into one log shared with the test, in order:
// how tests check the order in which the engine gives a backend its work and waits for it.

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backend/fence.h"
#include "backend/kernels.h"
#include "forwarding_cpu_backend.h"

namespace scalelab::testing {

// A loss that logs "forward", "backward" and "result" as it is asked for them.
class LoggedLoss final : public SoftmaxCrossEntropyKernel {
  public:
    LoggedLoss(std::unique_ptr<SoftmaxCrossEntropyKernel> loss, std::vector<std::string>& log)
        : loss_(std::move(loss)), log_(log) {}
    void forward(const Tensor& logits, std::span<const std::int32_t> labels) override {
        log_.push_back("forward");
        loss_->forward(logits, labels);
    }
    LossResult result() override {
        log_.push_back("result");
        return loss_->result();
    }
    Tensor backward(float grad_scale) override {
        log_.push_back("backward");
        return loss_->backward(grad_scale);
    }

  private:
    std::unique_ptr<SoftmaxCrossEntropyKernel> loss_;
    std::vector<std::string>& log_;
};

// A fence of work that is done when its call returns (as the CPU's), logging "fence mark" and
// "fence wait".
class LoggedFence final : public Fence {
  public:
    explicit LoggedFence(std::vector<std::string>& log) : log_(log) {}
    void mark() override { log_.push_back("fence mark"); }
    void wait() override { log_.push_back("fence wait"); }

  private:
    std::vector<std::string>& log_;
};

// The CPU backend, logging its loss's calls (LoggedLoss) into `log`: a test derives from it to
// log more into the same log (log()).
class LossLoggingBackend : public ForwardingCpuBackend {
  public:
    explicit LossLoggingBackend(std::vector<std::string>& log) : log_(log) {}
    std::unique_ptr<SoftmaxCrossEntropyKernel> softmax_cross_entropy(const TensorDesc& logits,
                                                                     float smoothing) override {
        return std::make_unique<LoggedLoss>(
            ForwardingCpuBackend::softmax_cross_entropy(logits, smoothing), log_);
    }

  protected:
    std::vector<std::string>& log() { return log_; }

  private:
    std::vector<std::string>& log_;
};

}  // namespace scalelab::testing
