#pragma once

// optim::Lamb fused: for the adapted segments, the moments and ||w||, ||u|| in one
// deterministic sum pass (two launches on a GPU) that also sets their trust ratio; then one
// pass that applies the update to every segment (and updates the moments of those not
// adapted).

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_optimizer_passes.h"
#include "backend/cuda/module/ieee_arithmetic.h"
#include "optim/adam_moments.h"
#include "optim/lamb.h"
#include "optim/tensor_norms.h"

namespace scalelab::cuda {

// A segment as Lamb treats it.
struct LambSegment {
    float weight_decay;  // float(wd), 0 where decay does not apply
    bool decays;         // wd != 0 (in double, as Lamb decides)
    bool adapted;        // its trust ratio comes from its norms
    double fixed_trust;  // the trust ratio of a segment not adapted: 1, clamped
};

// Lamb's coefficients of one step and its per-float formulas.
struct LambCoefficients : optim::AdamMoments {
    // m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g * g
    SCALELAB_HOST_DEVICE void update_moments(float gi, float& m, float& v) const {
        m = ieee::add(ieee::mul(beta1, m), ieee::mul(one_minus_beta1, gi));
        v = ieee::add(ieee::mul(beta2, v), ieee::mul(ieee::mul(one_minus_beta2, gi), gi));
    }

    // u = (m * inv_bias1) / (sqrt(v * inv_bias2) + eps) + wd * w (the decay where it applies).
    SCALELAB_HOST_DEVICE float direction(float m, float v, float w, const LambSegment& s) const {
        float u =
            ieee::div(ieee::mul(m, inv_bias1), ieee::add(ieee::sqrt(ieee::mul(v, inv_bias2)), eps));
        if (s.decays) {
            u = ieee::add(u, ieee::mul(s.weight_decay, w));
        }
        return u;
    }
};

// Pass 1 over the adapted segments: update the moments and add sums[0] += w^2, sums[1] += u^2
// in double. The parameters are not written: the step needs the whole tensor's ||u|| first.
struct LambNormTerms {
    const float* p;
    const float* g;
    float* m;
    float* v;
    const LambSegment* segments;
    LambCoefficients c;

    SCALELAB_HOST_DEVICE LambSegment segment(std::uint32_t s) const { return segments[s]; }

    SCALELAB_HOST_DEVICE void add(const LambSegment& s, std::uint64_t i, double* sums) const {
        float mi = m[i];
        float vi = v[i];
        c.update_moments(g[i], mi, vi);
        m[i] = mi;
        v[i] = vi;
        const float w = p[i];
        const double u = c.direction(mi, vi, w, s);
        const double wd = w;
        sums[0] += wd * wd;
        sums[1] += u * u;
    }
};

// Lamb's trust ratio of an adapted segment, in double:
//   trust = ||w|| / ||u||, or 1 when either is 0;  trust = min(trust, clamp) when clamp > 0
// stored as the step the update multiplies u by, float(lr * trust).
struct LambTrust {
    float* step;  // per segment
    double lr;
    double trust_clamp;

    SCALELAB_HOST_DEVICE void operator()(std::uint32_t s, const double* sums) const {
        double trust = ieee::safe_ratio(ieee::sqrt(sums[0]), ieee::sqrt(sums[1]));
        if (trust_clamp > 0) {
            trust = trust_clamp < trust ? trust_clamp : trust;  // std::min, as Lamb
        }
        step[s] = static_cast<float>(ieee::mul(lr, trust));
    }
};

struct LambSegmentStep {
    LambSegment segment;
    float step;  // float(lr * trust)
};

// Pass 2 over every segment: w = w - step * u, with an adapted segment's u from the moments
// pass 1 left, and the moments of the others updated here first.
struct LambUpdate {
    float* p;
    const float* g;
    float* m;
    float* v;
    const LambSegment* segments;
    const float* step;  // per adapted segment, from LambTrust
    double lr;
    LambCoefficients c;

    SCALELAB_HOST_DEVICE LambSegmentStep segment(std::uint32_t s) const {
        const LambSegment segment = segments[s];
        return LambSegmentStep{
            segment,
            segment.adapted ? step[s] : static_cast<float>(ieee::mul(lr, segment.fixed_trust))};
    }

    SCALELAB_HOST_DEVICE void operator()(const LambSegmentStep& s, std::uint64_t i) const {
        float mi = m[i];
        float vi = v[i];
        if (!s.segment.adapted) {
            c.update_moments(g[i], mi, vi);
            m[i] = mi;
            v[i] = vi;
        }
        const float w = p[i];
        p[i] = ieee::sub(w, ieee::mul(s.step, c.direction(mi, vi, w, s.segment)));
    }
};

template <FusedOptimizerPasses Passes>
class FusedLamb final : public optim::Optimizer {
  public:
    FusedLamb(std::vector<optim::ParamSegment> segments, const optim::LambConfig& config,
              typename Passes::Context context)
        : config_(config),
          segments_(std::move(segments)),
          extent_(optim::detail::check_segments(segments_)),
          chunks_(chunk_segments(segments_), 0, context),
          adapted_chunks_(adapted_chunks(segments_, config_), 2, context),
          segment_table_(segment_table(), context),
          step_(segments_.size(), context),
          m_(extent_, context),
          v_(extent_, context) {}

    std::string_view name() const override { return "lamb"; }

    void step(std::span<float> params, std::span<const float> grads, double lr) override {
        optim::detail::check_step(name(), params, grads, extent_, lr);
        const LambCoefficients c{
            optim::adam_moments(config_.beta1, config_.beta2, config_.eps, steps_ + 1)};

        adapted_chunks_.template sum<2>(LambNormTerms{params.data(), grads.data(), m_.data(),
                                                      v_.data(), segment_table_.data(), c},
                                        LambTrust{step_.data(), lr, config_.trust_clamp},
                                        "fused LAMB moments and norms");
        chunks_.update(LambUpdate{params.data(), grads.data(), m_.data(), v_.data(),
                                  segment_table_.data(), step_.data(), lr, c},
                       "fused LAMB update");
        ++steps_;
    }

  private:
    std::vector<LambSegment> segment_table() const {
        // Lamb's trust of a segment not adapted: 1, clamped like every other.
        const double fixed_trust =
            config_.trust_clamp > 0 ? std::min(1.0, config_.trust_clamp) : 1.0;
        std::vector<LambSegment> table;
        table.reserve(segments_.size());
        for (const optim::ParamSegment& segment : segments_) {
            const double wd = optim::weight_decay_of(config_, segment);
            table.push_back(LambSegment{static_cast<float>(wd), wd != 0,
                                        optim::is_adapted(config_, segment), fixed_trust});
        }
        return table;
    }

    optim::LambConfig config_;
    std::vector<optim::ParamSegment> segments_;
    std::size_t extent_;
    typename Passes::Segments chunks_;
    typename Passes::Segments adapted_chunks_;
    typename Passes::template Array<LambSegment> segment_table_;
    typename Passes::template Array<float> step_;
    typename Passes::template Array<float> m_;
    typename Passes::template Array<float> v_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::cuda
