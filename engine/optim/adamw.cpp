#include "optim/adamw.h"

#include <cmath>
#include <utility>

#include "optim/adam_moments.h"
#include "optim/tensor_norms.h"

namespace scalelab::optim {

namespace {

void check_config(const AdamWConfig& config) {
    detail::require_beta("AdamW beta1", config.beta1);
    detail::require_beta("AdamW beta2", config.beta2);
    detail::require_eps("AdamW eps", config.eps);
    detail::require_weight_decay(config.weight_decay);
}

struct AdamWCoefficients : AdamMoments {
    float lr;
    float decay_factor;  // 1 - lr * wd, formed in double as PyTorch's p.mul_(1 - lr * wd)
};

// One tensor, the formulas of AdamW's comment, in one vectorised pass.
// GCC vectorises a loop with sqrt only under -fno-math-errno (otherwise it must keep a scalar
// call to sqrtf for errno on a negative argument); the engine's build should pass it.
template <bool kDecay>
void update(float* __restrict p, const float* __restrict g, float* __restrict m,
            float* __restrict v, std::size_t n, AdamWCoefficients c) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        float w = p[i];
        if constexpr (kDecay) {
            w = w * c.decay_factor;
        }
        const float gi = g[i];
        const float mi = c.beta1 * m[i] + c.one_minus_beta1 * gi;
        const float vi = c.beta2 * v[i] + c.one_minus_beta2 * gi * gi;
        m[i] = mi;
        v[i] = vi;
        p[i] = w - c.lr * ((mi * c.inv_bias1) / (std::sqrt(vi * c.inv_bias2) + c.eps));
    }
}

}  // namespace

AdamW::AdamW(std::vector<ParamSegment> segments, AdamWConfig config)
    : config_(config), segments_(std::move(segments)) {
    check_config(config_);
    extent_ = detail::check_segments(segments_);
    m_.assign(extent_, 0.0f);
    v_.assign(extent_, 0.0f);
}

void AdamW::step(std::span<float> params, std::span<const float> grads, double lr) {
    detail::check_step(name(), params, grads, extent_, lr);

    AdamWCoefficients c{adam_moments(config_.beta1, config_.beta2, config_.eps, steps_ + 1),
                        static_cast<float>(lr), 1.0f};

    float* p = params.data();
    const float* g = grads.data();
    for (const ParamSegment& segment : segments_) {
        if (segment.size == 0) {
            continue;
        }
        const double wd = weight_decay_of(config_, segment);
        c.decay_factor = static_cast<float>(1.0 - lr * wd);
        // wd == 0 skips the multiply, as PyTorch does; the result would be the same (w * 1).
        const auto fn = wd != 0 ? &update<true> : &update<false>;
        fn(p + segment.offset, g + segment.offset, m_.data() + segment.offset,
           v_.data() + segment.offset, segment.size, c);
    }
    ++steps_;
}

}  // namespace scalelab::optim
