#pragma once

// optim::AdamW fused: one elementwise pass over every segment's chunks.

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_optimizer_passes.h"
#include "backend/cuda/module/ieee_arithmetic.h"
#include "optim/adam_moments.h"
#include "optim/adamw.h"
#include "optim/tensor_norms.h"

namespace scalelab::cuda {

// What AdamW's per-tensor decay is in this step.
struct AdamWDecay {
    bool decays;         // the segment's wd != 0
    float decay_factor;  // float(1 - lr * wd), formed in double as AdamW (PyTorch) does
};

// AdamW's formulas per float, in its order and roundings:
//   w = w * (1 - lr * wd)
//   m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
//   p = w - lr * ((m * inv_bias1) / (sqrt(v * inv_bias2) + eps))
struct AdamWUpdate {
    float* p;
    const float* g;
    float* m;
    float* v;
    const double* weight_decay;  // per segment, 0 where decay does not apply
    double lr_double;            // for 1 - lr * wd in double
    float lr;
    optim::AdamMoments c;

    SCALELAB_HOST_DEVICE AdamWDecay segment(std::uint32_t s) const {
        const double wd = weight_decay[s];
        return AdamWDecay{wd != 0.0, static_cast<float>(ieee::sub(1.0, ieee::mul(lr_double, wd)))};
    }

    SCALELAB_HOST_DEVICE void operator()(AdamWDecay decay, std::uint64_t i) const {
        float w = p[i];
        // wd == 0 skips the multiply, as AdamW does (the result would be w * 1 anyway).
        if (decay.decays) {
            w = ieee::mul(w, decay.decay_factor);
        }
        const float gi = g[i];
        const float mi = ieee::add(ieee::mul(c.beta1, m[i]), ieee::mul(c.one_minus_beta1, gi));
        const float vi =
            ieee::add(ieee::mul(c.beta2, v[i]), ieee::mul(ieee::mul(c.one_minus_beta2, gi), gi));
        m[i] = mi;
        v[i] = vi;
        const float denominator = ieee::add(ieee::sqrt(ieee::mul(vi, c.inv_bias2)), c.eps);
        p[i] = ieee::sub(w, ieee::mul(lr, ieee::div(ieee::mul(mi, c.inv_bias1), denominator)));
    }
};

template <FusedOptimizerPasses Passes>
class FusedAdamW final : public optim::Optimizer {
  public:
    FusedAdamW(std::vector<optim::ParamSegment> segments, const optim::AdamWConfig& config,
               typename Passes::Context context)
        : config_(config),
          segments_(std::move(segments)),
          extent_(optim::detail::check_segments(segments_)),
          chunks_(chunk_segments(segments_), 0, context),
          weight_decay_(optim::weight_decays_of<double>(config_, segments_), context),
          m_(extent_, context),
          v_(extent_, context) {}

    std::string_view name() const override { return "adamw"; }

    void step(std::span<float> params, std::span<const float> grads, double lr) override {
        optim::detail::check_step(name(), params, grads, extent_, lr);
        AdamWUpdate update{};
        update.p = params.data();
        update.g = grads.data();
        update.m = m_.data();
        update.v = v_.data();
        update.weight_decay = weight_decay_.data();
        update.lr_double = lr;
        update.lr = static_cast<float>(lr);
        update.c = optim::adam_moments(config_.beta1, config_.beta2, config_.eps, steps_ + 1);
        chunks_.update(update, "fused AdamW update");
        ++steps_;
    }

  private:
    optim::AdamWConfig config_;
    std::vector<optim::ParamSegment> segments_;
    std::size_t extent_;
    typename Passes::Segments chunks_;
    typename Passes::template Array<double> weight_decay_;  // per segment
    typename Passes::template Array<float> m_;
    typename Passes::template Array<float> v_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::cuda
