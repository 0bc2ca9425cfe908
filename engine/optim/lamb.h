#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"

namespace scalelab::optim {

struct LambConfig {
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-6;
    double weight_decay = 0.0;
    double trust_clamp = 0.0;          // > 0: trust ratio clamped to [0, trust_clamp]
    bool decay_norm_and_bias = true;   // false: no weight decay on Bias/NormScale/NormShift
    bool adapt_norm_and_bias = false;  // false: trust ratio 1 on Bias/NormScale/NormShift
};

// LAMB (You et al. 2019, "Large batch optimization for deep learning: training BERT in 76
// minutes", algorithm 2) with Adam's bias correction, per float of a tensor (segment) at step t
// (t = 1 on the first step), wd the tensor's weight decay (0 where decay does not apply):
//
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   r = (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
//   u = r + wd * w
// and per tensor, norms in double:
//   trust = ||w|| / ||u||, or 1 if either is 0 or the tensor is a bias/BN one not adapted
//   trust = min(trust, trust_clamp)                when trust_clamp > 0 (the 1 included)
//   w = w - lr * trust * u
//
// Like AdamW the decay is part of the update rather than of the gradient, so it does not go
// through the moments; unlike AdamW it is scaled by the trust ratio with the rest of u.
class Lamb final : public Optimizer {
  public:
    // Throws Error(InvalidSpec) for a bad config (a beta outside [0, 1), eps <= 0, negative
    // weight decay or clamp) and Error(Internal) for overlapping segments. Allocates both
    // moments once, covering every segment.
    Lamb(std::vector<ParamSegment> segments, LambConfig config);

    std::string_view name() const override { return "lamb"; }

    // Throws Error(Internal) if the buffers differ in length or do not cover every segment, and
    // Error(InvalidSpec) for a negative or non-finite lr.
    void step(std::span<float> params, std::span<const float> grads, double lr) override;

    const LambConfig& config() const { return config_; }
    const std::vector<ParamSegment>& segments() const { return segments_; }

    // The moments m and v, laid out like the parameters; zero before the first step.
    std::span<const float> first_moment() const { return m_; }
    std::span<const float> second_moment() const { return v_; }

    // Each segment's trust ratio in the last step (after the clamp), in the order of
    // segments(); 1 before the first step. For charts and tests.
    std::span<const double> trust_ratios() const { return trust_; }

    std::int64_t steps() const { return steps_; }

  private:
    LambConfig config_;
    std::vector<ParamSegment> segments_;
    std::size_t extent_ = 0;
    std::vector<float> m_;
    std::vector<float> v_;
    std::vector<double> trust_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::optim
