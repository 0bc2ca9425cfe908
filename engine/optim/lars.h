#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"

namespace scalelab::optim {

struct LarsConfig {
    double momentum = 0.9;
    bool nesterov = false;
    double weight_decay = 0.0;
    double trust_coefficient = 0.001;  // eta
    bool larc = false;                 // LARC's clip mode: local lr never above the global lr
    bool decay_norm_and_bias = true;   // false: no weight decay on Bias/NormScale/NormShift
    bool adapt_norm_and_bias = false;  // false: local lr 1 on Bias/NormScale/NormShift
};

// LARS (You, Gitman & Ginsburg 2017) as NVIDIA's Apex LARC wrapper computes it around
// torch.optim.SGD, per parameter tensor (segment), with wd the tensor's weight decay (0 where
// decay does not apply) and eta the trust coefficient:
//
//   local = eta * ||w|| / (||g|| + wd * ||w||)     norms in double, over the whole tensor
//   local = 1                                      if ||w|| == 0 or ||g|| == 0, or the tensor
//                                                  is a bias/BN one and not adapted
//   LARC (clip): local = min(local / lr, 1)        so that lr * local = min(eta-ratio, lr);
//                                                  not applied where local is 1 by the rule above
//   d   = (g + wd * w) * local
//   buf = momentum * buf + d                       (buf starts at 0, so step 1 gives buf = d)
//   d   = nesterov ? d + momentum * buf : buf
//   w   = w - lr * d
//
// Apex adds eps = 1e-8 to the denominator; here the zero-norm cases are caught explicitly, so
// the ratio is exactly eta * ||w|| / (||g|| + wd ||w||) and never 0/0.
class Lars final : public Optimizer {
  public:
    // Throws Error(InvalidSpec) for a bad config (momentum outside [0, 1), negative weight
    // decay, eta <= 0, Nesterov without momentum) and Error(Internal) for overlapping segments.
    // Allocates the momentum buffer (when momentum != 0) once, covering every segment.
    Lars(std::vector<ParamSegment> segments, LarsConfig config);

    std::string_view name() const override { return "lars"; }

    // Throws Error(Internal) if the buffers differ in length or do not cover every segment, and
    // Error(InvalidSpec) for a negative or non-finite lr.
    void step(std::span<float> params, std::span<const float> grads, double lr) override;

    const LarsConfig& config() const { return config_; }
    const std::vector<ParamSegment>& segments() const { return segments_; }

    // The momentum buffer, laid out like the parameters (empty when momentum == 0).
    std::span<const float> momentum_buffer() const { return momentum_; }

    // The factor each segment's gradient was scaled by in the last step (after LARC's clip),
    // in the order of segments(); 1 before the first step. For charts and tests.
    std::span<const double> local_lrs() const { return local_lrs_; }

    std::int64_t steps() const { return steps_; }

  private:
    LarsConfig config_;
    std::vector<ParamSegment> segments_;
    std::size_t extent_ = 0;
    std::vector<float> momentum_;
    std::vector<double> local_lrs_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::optim
