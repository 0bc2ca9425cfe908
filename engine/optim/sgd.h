#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"

namespace scalelab::optim {

struct SgdConfig {
    double momentum = 0.9;
    double dampening = 0.0;
    bool nesterov = false;
    double weight_decay = 0.0;
    bool decay_norm_and_bias = true;  // false: no weight decay on Bias/NormScale/NormShift
};

// Stochastic gradient descent exactly as PyTorch's torch.optim.SGD computes it, per float:
//
//   d   = g + wd * p                          (wd only on segments where decay applies)
//   if momentum != 0:
//     buf = d                                 on the very first step
//     buf = momentum * buf + (1 - dampening) * d   afterwards
//     d   = nesterov ? d + momentum * buf : buf
//   p   = p - lr * d
//
// This is the "lr outside the momentum" form: buf accumulates raw gradients, so changing lr
// (schedules, warm-up) takes effect at once instead of after the momentum has decayed.
// Weight decay is L2 regularisation added to the gradient (not AdamW's decoupled decay), so it
// also passes through the momentum. Arithmetic is in float, as PyTorch does for float32
// parameters, with the coefficients rounded to float once per step.
class Sgd final : public Optimizer {
  public:
    // Throws Error(InvalidSpec) for a bad config (negative momentum, dampening or weight decay;
    // Nesterov without momentum or with dampening) and Error(Internal) for overlapping segments.
    // Allocates the momentum buffer (when momentum != 0) once, covering every segment.
    Sgd(std::vector<ParamSegment> segments, SgdConfig config);

    std::string_view name() const override { return "sgd"; }

    // Throws Error(Internal) if the buffers differ in length or do not cover every segment, and
    // Error(InvalidSpec) for a negative or non-finite lr.
    void step(std::span<float> params, std::span<const float> grads, double lr) override;

    const SgdConfig& config() const { return config_; }
    const std::vector<ParamSegment>& segments() const { return segments_; }

    // The momentum buffer, laid out like the parameters (empty when momentum == 0). Before the
    // first step its contents are meaningless: the first step overwrites it with d.
    std::span<const float> momentum_buffer() const { return momentum_; }

    // Steps taken so far.
    std::int64_t steps() const { return steps_; }

  private:
    // A maximal run of adjacent segments that share one weight decay: the unit the update loop
    // runs over, so the inner loop sees one contiguous range and no per-element decision.
    struct Run {
        std::size_t offset;
        std::size_t size;
        float weight_decay;
    };

    SgdConfig config_;
    std::vector<ParamSegment> segments_;
    std::vector<Run> runs_;
    std::size_t extent_ = 0;  // max(offset + size): the shortest buffers step() accepts
    std::vector<float> momentum_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::optim
