#pragma once

// optim::NovoGrad fused: the adapted segments' ||g||^2 in one deterministic sum pass (two
// launches on a GPU) that also updates their per-tensor second moment, then one update pass.

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_optimizer_passes.h"
#include "backend/cuda/module/ieee_arithmetic.h"
#include "optim/novograd.h"
#include "optim/tensor_norms.h"

namespace scalelab::cuda {

// A segment as NovoGrad treats it.
struct NovoGradSegment {
    float weight_decay;          // float(wd), 0 where decay does not apply
    bool decays;                 // wd != 0 (in double, as NovoGrad decides)
    bool adapted;                // one second moment for the tensor, else one per float
    std::uint64_t float_offset;  // not adapted: v of float offset + j is v_float[float_offset + j]
    std::uint64_t offset;        // the segment's offset in the flat buffers
};

// sums[0] += g^2 in double (detail::squared_norm's terms; each is exact).
struct GradientNormTerms {
    const float* g;

    SCALELAB_HOST_DEVICE int segment(std::uint32_t) const { return 0; }

    SCALELAB_HOST_DEVICE void add(int, std::uint64_t i, double* sums) const {
        const double gi = g[i];
        sums[0] += gi * gi;
    }
};

// NovoGrad's per-tensor second moment, in double, and the factor the update divides g by:
//   v = ||g||^2 at t = 1, else beta2 * v + (1 - beta2) * ||g||^2
//   inv_denominator = float(1 / (sqrt(v) + eps))
struct TensorSecondMoment {
    double* v;               // per segment
    float* inv_denominator;  // per segment
    double beta2;
    double one_minus_beta2;
    double eps;
    bool first;

    SCALELAB_HOST_DEVICE void operator()(std::uint32_t s, const double* sums) const {
        const double g2 = sums[0];
        const double vs =
            first ? g2 : ieee::add(ieee::mul(beta2, v[s]), ieee::mul(one_minus_beta2, g2));
        v[s] = vs;
        inv_denominator[s] = static_cast<float>(ieee::div(1.0, ieee::add(ieee::sqrt(vs), eps)));
    }
};

struct NovoGradSegmentStep {
    NovoGradSegment segment;
    float inv_denominator;  // adapted segments only
};

// NovoGrad's formulas per float, in its order and roundings:
//   adapted:      d = g * inv_denominator
//   not adapted:  v_i = g * g at t = 1, else beta2 * v_i + (1 - beta2) * g * g;
//                 d = g / (sqrt(v_i) + eps)
//   d = d + wd * w;  m = beta1 * m + m_coefficient * d;  w = w - lr * m
struct NovoGradUpdate {
    float* p;
    const float* g;
    float* m;
    float* v_float;
    const NovoGradSegment* segments;
    const float* inv_denominator;  // per segment
    float lr;
    float beta1;
    float m_coefficient;  // grad_averaging ? 1 - beta1 : 1
    float beta2;
    float one_minus_beta2;
    float eps;
    bool first;

    SCALELAB_HOST_DEVICE NovoGradSegmentStep segment(std::uint32_t s) const {
        return NovoGradSegmentStep{segments[s], inv_denominator[s]};
    }

    SCALELAB_HOST_DEVICE void operator()(const NovoGradSegmentStep& s, std::uint64_t i) const {
        const float gi = g[i];
        const float w = p[i];
        float d;
        if (s.segment.adapted) {
            d = ieee::mul(gi, s.inv_denominator);
        } else {
            float& v = v_float[s.segment.float_offset + (i - s.segment.offset)];
            const float vi = first ? ieee::mul(gi, gi)
                                   : ieee::add(ieee::mul(beta2, v),
                                               ieee::mul(ieee::mul(one_minus_beta2, gi), gi));
            v = vi;
            d = ieee::div(gi, ieee::add(ieee::sqrt(vi), eps));
        }
        // wd == 0 skips the term, as NovoGrad does: 0 * w is not always 0.
        if (s.segment.decays) {
            d = ieee::add(d, ieee::mul(s.segment.weight_decay, w));
        }
        const float mi = ieee::add(ieee::mul(beta1, m[i]), ieee::mul(m_coefficient, d));
        m[i] = mi;
        p[i] = ieee::sub(w, ieee::mul(lr, mi));
    }
};

template <FusedOptimizerPasses Passes>
class FusedNovoGrad final : public optim::Optimizer {
  public:
    FusedNovoGrad(std::vector<optim::ParamSegment> segments, const optim::NovoGradConfig& config,
                  typename Passes::Context context)
        : config_(config),
          segments_(std::move(segments)),
          extent_(optim::detail::check_segments(segments_)),
          chunks_(chunk_segments(segments_), 0, context),
          adapted_chunks_(adapted_chunks(segments_, config_), 1, context),
          segment_table_(segment_table(), context),
          v_tensor_(segments_.size(), context),
          inv_denominator_(segments_.size(), context),
          m_(extent_, context),
          v_float_(per_float_moments(), context) {}

    std::string_view name() const override { return "novograd"; }

    void step(std::span<float> params, std::span<const float> grads, double lr) override {
        optim::detail::check_step(name(), params, grads, extent_, lr);
        const bool first = steps_ == 0;
        adapted_chunks_.template sum<1>(
            GradientNormTerms{grads.data()},
            TensorSecondMoment{v_tensor_.data(), inv_denominator_.data(), config_.beta2,
                               1.0 - config_.beta2, config_.eps, first},
            "fused NovoGrad gradient norms");
        NovoGradUpdate update{};
        update.p = params.data();
        update.g = grads.data();
        update.m = m_.data();
        update.v_float = v_float_.data();
        update.segments = segment_table_.data();
        update.inv_denominator = inv_denominator_.data();
        update.lr = static_cast<float>(lr);
        update.beta1 = static_cast<float>(config_.beta1);
        update.m_coefficient =
            static_cast<float>(config_.grad_averaging ? 1.0 - config_.beta1 : 1.0);
        update.beta2 = static_cast<float>(config_.beta2);
        update.one_minus_beta2 = static_cast<float>(1.0 - config_.beta2);
        update.eps = static_cast<float>(config_.eps);
        update.first = first;
        chunks_.update(update, "fused NovoGrad update");
        ++steps_;
    }

  private:
    // The segments' roles, with the per-float moments of those not adapted packed one after
    // the other, as NovoGrad packs them.
    std::vector<NovoGradSegment> segment_table() const {
        std::vector<NovoGradSegment> table;
        table.reserve(segments_.size());
        std::uint64_t floats = 0;
        for (const optim::ParamSegment& segment : segments_) {
            const double wd = optim::weight_decay_of(config_, segment);
            const bool tensor_moment = optim::is_adapted(config_, segment);
            table.push_back(NovoGradSegment{static_cast<float>(wd), wd != 0, tensor_moment,
                                            tensor_moment ? 0 : floats, segment.offset});
            if (!tensor_moment) {
                floats += segment.size;
            }
        }
        return table;
    }

    std::size_t per_float_moments() const {
        std::size_t floats = 0;
        for (const optim::ParamSegment& segment : segments_) {
            if (!optim::is_adapted(config_, segment)) {
                floats += segment.size;
            }
        }
        return floats;
    }

    optim::NovoGradConfig config_;
    std::vector<optim::ParamSegment> segments_;
    std::size_t extent_;
    typename Passes::Segments chunks_;
    typename Passes::Segments adapted_chunks_;
    typename Passes::template Array<NovoGradSegment> segment_table_;
    typename Passes::template Array<double> v_tensor_;
    typename Passes::template Array<float> inv_denominator_;
    typename Passes::template Array<float> m_;
    typename Passes::template Array<float> v_float_;
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::cuda
