#include "optim/novograd.h"

#include <cmath>
#include <string>
#include <utility>

#include "error.h"
#include "optim/tensor_norms.h"

namespace scalelab::optim {

namespace {

void check_config(const NovoGradConfig& config) {
    detail::require_beta("NovoGrad beta1", config.beta1);
    detail::require_beta("NovoGrad beta2", config.beta2);
    detail::require_eps("NovoGrad eps", config.eps);
    detail::require_weight_decay(config.weight_decay);
}

struct NovogradCoefficients {
    float lr;
    float weight_decay;
    float beta1;
    float m_coefficient;  // grad_averaging ? 1 - beta1 : 1
    float beta2;
    float one_minus_beta2;
    float eps;
};

// An adapted tensor: d = g * (1 / (sqrt(v) + eps)) + wd * w with the tensor's v folded into one
// factor; m = beta1 * m + c * d; w = w - lr * m.
template <bool kDecay>
void update_tensor(float* __restrict p, const float* __restrict g, float* __restrict m,
                   std::size_t n, NovogradCoefficients c, float inv_denominator) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        float d = g[i] * inv_denominator;
        if constexpr (kDecay) {
            d = d + c.weight_decay * p[i];
        }
        const float mi = c.beta1 * m[i] + c.m_coefficient * d;
        m[i] = mi;
        p[i] = p[i] - c.lr * mi;
    }
}

// A tensor kept per float: the same formulas with v_i in place of the tensor's v.
// GCC vectorises a loop with sqrt only under -fno-math-errno (otherwise it must keep a scalar
// call to sqrtf for errno on a negative argument); the engine's build should pass it.
template <bool kDecay, bool kFirst>
void update_floats(float* __restrict p, const float* __restrict g, float* __restrict m,
                   float* __restrict v, std::size_t n, NovogradCoefficients c) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        const float gi = g[i];
        float vi;
        if constexpr (kFirst) {
            vi = gi * gi;
        } else {
            vi = c.beta2 * v[i] + c.one_minus_beta2 * gi * gi;
        }
        v[i] = vi;
        float d = gi / (std::sqrt(vi) + c.eps);
        if constexpr (kDecay) {
            d = d + c.weight_decay * p[i];
        }
        const float mi = c.beta1 * m[i] + c.m_coefficient * d;
        m[i] = mi;
        p[i] = p[i] - c.lr * mi;
    }
}

}  // namespace

NovoGrad::NovoGrad(std::vector<ParamSegment> segments, NovoGradConfig config)
    : config_(config), segments_(std::move(segments)) {
    check_config(config_);
    extent_ = detail::check_segments(segments_);
    m_.assign(extent_, 0.0f);
    v_tensor_.assign(segments_.size(), 0.0);
    v_float_offset_.assign(segments_.size(), 0);
    std::size_t floats = 0;
    for (std::size_t s = 0; s < segments_.size(); ++s) {
        if (!is_adapted(config_, segments_[s])) {
            v_float_offset_[s] = floats;
            floats += segments_[s].size;
        }
    }
    v_float_.assign(floats, 0.0f);
}

void NovoGrad::step(std::span<float> params, std::span<const float> grads, double lr) {
    detail::check_step(name(), params, grads, extent_, lr);

    const bool first = steps_ == 0;
    NovogradCoefficients c{};
    c.lr = static_cast<float>(lr);
    c.beta1 = static_cast<float>(config_.beta1);
    c.m_coefficient = static_cast<float>(config_.grad_averaging ? 1.0 - config_.beta1 : 1.0);
    c.beta2 = static_cast<float>(config_.beta2);
    c.one_minus_beta2 = static_cast<float>(1.0 - config_.beta2);
    c.eps = static_cast<float>(config_.eps);

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
        const std::size_t n = segment.size;

        if (is_adapted(config_, segment)) {
            const double g2 = detail::squared_norm(gs, n);
            double& v = v_tensor_[s];
            v = first ? g2 : config_.beta2 * v + (1.0 - config_.beta2) * g2;
            // A zero gradient on step 1 gives v = 0 and d = 0 / eps = 0: no NaN.
            const auto inv_denominator = static_cast<float>(1.0 / (std::sqrt(v) + config_.eps));
            decay ? update_tensor<true>(ps, gs, ms, n, c, inv_denominator)
                  : update_tensor<false>(ps, gs, ms, n, c, inv_denominator);
        } else {
            float* vs = v_float_.data() + v_float_offset_[s];
            if (first) {
                decay ? update_floats<true, true>(ps, gs, ms, vs, n, c)
                      : update_floats<false, true>(ps, gs, ms, vs, n, c);
            } else {
                decay ? update_floats<true, false>(ps, gs, ms, vs, n, c)
                      : update_floats<false, false>(ps, gs, ms, vs, n, c);
            }
        }
    }
    ++steps_;
}

}  // namespace scalelab::optim
