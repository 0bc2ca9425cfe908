#include "optim/lamb.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "error.h"
#include "optim/adam_moments.h"
#include "optim/format_number.h"
#include "optim/tensor_norms.h"

namespace scalelab::optim {

namespace {

void check_config(const LambConfig& config) {
    detail::require_beta("LAMB beta1", config.beta1);
    detail::require_beta("LAMB beta2", config.beta2);
    detail::require_eps("LAMB eps", config.eps);
    detail::require_weight_decay(config.weight_decay);
    if (!std::isfinite(config.trust_clamp) || config.trust_clamp < 0) {
        throw Error(ErrorKind::InvalidSpec,
                    "the LAMB trust clamp must be 0 (no clamp) or a number > 0 (got " +
                        format_number(config.trust_clamp) + ")");
    }
}

struct LambCoefficients : AdamMoments {
    float weight_decay;
};

// u = mhat / (sqrt(vhat) + eps) + wd * w from the already updated moments. Both passes over an
// adapted tensor call this on the same floats, so the u whose norm sets the trust ratio is the
// u that is applied (up to how the compiler contracts the same float operations).
// GCC vectorises a loop with sqrt only under -fno-math-errno (otherwise it must keep a scalar
// call to sqrtf for errno on a negative argument); the engine's build should pass it.
template <bool kDecay>
inline float direction(float m, float v, float w, const LambCoefficients& c) {
    float u = (m * c.inv_bias1) / (std::sqrt(v * c.inv_bias2) + c.eps);
    if constexpr (kDecay) {
        u = u + c.weight_decay * w;
    }
    return u;
}

struct Norms {
    double w2;  // ||w||^2
    double u2;  // ||u||^2
};

// Pass 1 over an adapted tensor: update the moments and accumulate ||w||^2 and ||u||^2 (in
// double, see tensor_norms.h). The parameters are not written: the trust ratio that scales
// their update needs the whole tensor's ||u|| first. Recomputing u in pass 2 costs a sqrt and a
// division per float but no scratch buffer the size of the model.
template <bool kDecay>
Norms update_moments(const float* __restrict p, const float* __restrict g, float* __restrict m,
                     float* __restrict v, std::size_t n, LambCoefficients c) {
    double w2 = 0.0;
    double u2 = 0.0;
#if defined(_OPENMP)
#pragma omp simd reduction(+ : w2, u2)
#endif
    for (std::size_t i = 0; i < n; ++i) {
        const float gi = g[i];
        const float mi = c.beta1 * m[i] + c.one_minus_beta1 * gi;
        const float vi = c.beta2 * v[i] + c.one_minus_beta2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        const double u = direction<kDecay>(mi, vi, p[i], c);
        const double w = p[i];
        w2 += w * w;
        u2 += u * u;
    }
    return Norms{w2, u2};
}

// Pass 2: w = w - (lr * trust) * u.
template <bool kDecay>
void apply(float* __restrict p, const float* __restrict m, const float* __restrict v, std::size_t n,
           LambCoefficients c, float step) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        p[i] = p[i] - step * direction<kDecay>(m[i], v[i], p[i], c);
    }
}

// A tensor whose trust ratio is known before the pass (not adapted): moments and update in one
// pass, w = w - (lr * trust) * u.
template <bool kDecay>
void update_fused(float* __restrict p, const float* __restrict g, float* __restrict m,
                  float* __restrict v, std::size_t n, LambCoefficients c, float step) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        const float gi = g[i];
        const float mi = c.beta1 * m[i] + c.one_minus_beta1 * gi;
        const float vi = c.beta2 * v[i] + c.one_minus_beta2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] = p[i] - step * direction<kDecay>(mi, vi, p[i], c);
    }
}

}  // namespace

Lamb::Lamb(std::vector<ParamSegment> segments, LambConfig config)
    : config_(config), segments_(std::move(segments)) {
    check_config(config_);
    extent_ = detail::check_segments(segments_);
    m_.assign(extent_, 0.0f);
    v_.assign(extent_, 0.0f);
    trust_.assign(segments_.size(), 1.0);
}

void Lamb::step(std::span<float> params, std::span<const float> grads, double lr) {
    detail::check_step(name(), params, grads, extent_, lr);

    LambCoefficients c{adam_moments(config_.beta1, config_.beta2, config_.eps, steps_ + 1), 0.0f};

    float* p = params.data();
    const float* g = grads.data();
    for (std::size_t s = 0; s < segments_.size(); ++s) {
        const ParamSegment& segment = segments_[s];
        if (segment.size == 0) {
            continue;
        }
        const double wd = weight_decay_of(config_, segment);
        c.weight_decay = static_cast<float>(wd);
        // wd == 0 takes the kernels without the decay term: 0 * w is not always 0.
        const bool decay = wd != 0;
        float* ps = p + segment.offset;
        const float* gs = g + segment.offset;
        float* ms = m_.data() + segment.offset;
        float* vs = v_.data() + segment.offset;
        const std::size_t n = segment.size;
        const bool adapt = is_adapted(config_, segment);

        double trust = 1.0;
        if (adapt) {
            const Norms norms = decay ? update_moments<true>(ps, gs, ms, vs, n, c)
                                      : update_moments<false>(ps, gs, ms, vs, n, c);
            trust = detail::safe_ratio(std::sqrt(norms.w2), std::sqrt(norms.u2));
        }
        if (config_.trust_clamp > 0) {
            trust = std::min(trust, config_.trust_clamp);
        }
        trust_[s] = trust;
        const float step = static_cast<float>(lr * trust);
        if (adapt) {
            decay ? apply<true>(ps, ms, vs, n, c, step) : apply<false>(ps, ms, vs, n, c, step);
        } else {
            decay ? update_fused<true>(ps, gs, ms, vs, n, c, step)
                  : update_fused<false>(ps, gs, ms, vs, n, c, step);
        }
    }
    ++steps_;
}

}  // namespace scalelab::optim
