#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"

namespace scalelab::optim {

struct NovoGradConfig {
    double beta1 = 0.95;  // NVIDIA's (NeMo, Apex) defaults
    double beta2 = 0.98;
    double eps = 1e-8;
    double weight_decay = 0.0;
    bool grad_averaging = false;       // true: m averages (1 - beta1) * d instead of summing d
    bool decay_norm_and_bias = true;   // false: no weight decay on Bias/NormScale/NormShift
    bool adapt_norm_and_bias = false;  // false: Bias/NormScale/NormShift get per-float moments
};

// NovoGrad (Ginsburg et al. 2019, "Stochastic gradient methods with layer-wise adaptive moments
// for training of deep networks") as NVIDIA's NeMo/Apex compute it. Per tensor (segment), with
// the second moment a single number per tensor (kept in double), t = 1 on the first step and
// wd the tensor's weight decay (0 where decay does not apply):
//
//   v = ||g||^2                                    at t = 1
//   v = beta2 * v + (1 - beta2) * ||g||^2          afterwards
//   d = g / (sqrt(v) + eps) + wd * w               decoupled decay: it is not normalised by v
//   m = beta1 * m + (grad_averaging ? 1 - beta1 : 1) * d      (m starts at 0)
//   w = w - lr * m
//
// No bias correction: at t = 1 v is ||g||^2 itself, not an average with 0. The layer-wise part
// is v being one number per tensor. A bias or batch-norm tensor excluded from layer-wise
// adaptation (the default) keeps one v per float instead, v_i = g_i^2 at t = 1 and then the
// same average of g_i^2, i.e. the same formulas with Adam's element-wise second moment, so its
// steps stay on the scale of the adapted tensors' steps (a raw gradient would not).
class NovoGrad final : public Optimizer {
  public:
    // Throws Error(InvalidSpec) for a bad config (a beta outside [0, 1), eps <= 0, negative
    // weight decay) and Error(Internal) for overlapping segments. Allocates its state once: m
    // for every float, v per adapted tensor and per float of the others.
    NovoGrad(std::vector<ParamSegment> segments, NovoGradConfig config);

    std::string_view name() const override { return "novograd"; }

    // Throws Error(Internal) if the buffers differ in length or do not cover every segment, and
    // Error(InvalidSpec) for a negative or non-finite lr.
    void step(std::span<float> params, std::span<const float> grads, double lr) override;

    const NovoGradConfig& config() const { return config_; }
    const std::vector<ParamSegment>& segments() const { return segments_; }

    // The first moment m, laid out like the parameters; zero before the first step.
    std::span<const float> first_moment() const { return m_; }

    // The per-tensor second moment v of each segment, in the order of segments(); 0 before the
    // first step and for segments that keep per-float moments.
    std::span<const double> tensor_second_moments() const { return v_tensor_; }

    std::int64_t steps() const { return steps_; }

  private:
    NovoGradConfig config_;
    std::vector<ParamSegment> segments_;
    std::size_t extent_ = 0;
    std::vector<float> m_;
    std::vector<double> v_tensor_;
    // Per-float second moments of the non-adapted segments, packed: segment s's floats start
    // at v_float_offset_[s] (unused for adapted segments).
    std::vector<float> v_float_;
    std::vector<std::size_t> v_float_offset_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::optim
