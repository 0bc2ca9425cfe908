#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"

namespace scalelab::optim {

struct AdamWConfig {
    double beta1 = 0.9;
    double beta2 = 0.999;
    double eps = 1e-8;
    double weight_decay = 0.01;       // torch.optim.AdamW's default
    bool decay_norm_and_bias = true;  // false: no weight decay on Bias/NormScale/NormShift
};

// AdamW (Loshchilov & Hutter 2019, "Decoupled weight decay regularization") as
// torch.optim.AdamW computes it, per float at step t (t = 1 on the first step), wd the
// tensor's weight decay (0 where decay does not apply):
//
//   w = w - lr * wd * w                            decoupled: before, and apart from, Adam
//   m = beta1 * m + (1 - beta1) * g
//   v = beta2 * v + (1 - beta2) * g^2
//   w = w - lr * (m / (1 - beta1^t)) / (sqrt(v / (1 - beta2^t)) + eps)
//
// The decay never enters the moments, so it shrinks every weight by the same factor
// (1 - lr * wd) instead of being divided by sqrt(v) as L2 regularisation in Adam would be.
// There is no layer-wise adaptation, so only the decay exclusion applies.
class AdamW final : public Optimizer {
  public:
    // Throws Error(InvalidSpec) for a bad config (a beta outside [0, 1), eps <= 0, negative
    // weight decay) and Error(Internal) for overlapping segments. Allocates both moments once.
    AdamW(std::vector<ParamSegment> segments, AdamWConfig config);

    std::string_view name() const override { return "adamw"; }

    // Throws Error(Internal) if the buffers differ in length or do not cover every segment, and
    // Error(InvalidSpec) for a negative or non-finite lr.
    void step(std::span<float> params, std::span<const float> grads, double lr) override;

    const AdamWConfig& config() const { return config_; }
    const std::vector<ParamSegment>& segments() const { return segments_; }

    // The moments m and v, laid out like the parameters; zero before the first step.
    std::span<const float> first_moment() const { return m_; }
    std::span<const float> second_moment() const { return v_; }

    std::int64_t steps() const { return steps_; }

  private:
    AdamWConfig config_;
    std::vector<ParamSegment> segments_;
    std::size_t extent_ = 0;
    std::vector<float> m_;
    std::vector<float> v_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::optim
