#include "optim/lars.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "error.h"
#include "optim/format_number.h"
#include "optim/tensor_norms.h"

namespace scalelab::optim {

namespace {

void check_config(const LarsConfig& config) {
    const auto reject = [](const std::string& message) {
        throw Error(ErrorKind::InvalidSpec, message);
    };
    if (!std::isfinite(config.momentum) || config.momentum < 0 || config.momentum >= 1) {
        reject("LARS momentum must be in [0, 1) (got " + format_number(config.momentum) +
               "); use 0 for none");
    }
    detail::require_weight_decay(config.weight_decay);
    if (!std::isfinite(config.trust_coefficient) || config.trust_coefficient <= 0) {
        reject("the LARS trust coefficient (eta) must be a number > 0 (got " +
               format_number(config.trust_coefficient) + "); 0.001 is usual");
    }
    if (config.nesterov && config.momentum <= 0) {
        reject("Nesterov momentum needs momentum > 0 (got " + format_number(config.momentum) +
               "); set a momentum or turn Nesterov off");
    }
}

struct LarsCoefficients {
    float lr;
    float weight_decay;
    float local_lr;
    float momentum;
};

// One tensor's update, the formulas of Lars's comment. As in Sgd, every choice is a template
// parameter, so each instance is a branch-free loop the compiler vectorises.
template <bool kDecay, bool kMomentum, bool kNesterov>
void update(float* __restrict p, const float* __restrict g, float* __restrict buf, std::size_t n,
            LarsCoefficients c) {
    const float lr = c.lr;
    const float wd = c.weight_decay;
    const float local = c.local_lr;
    const float mom = c.momentum;
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        float d = g[i];
        if constexpr (kDecay) {
            d = d + wd * p[i];
        }
        d = d * local;
        if constexpr (kMomentum) {
            // PyTorch's momentum form: buf accumulates the (locally scaled) gradients and the
            // global lr is applied below, at the update. A schedule or warm-up that changes lr
            // between steps therefore acts at once and needs no correction; the form that folds
            // lr into the buffer (v = m v + lr g; w -= v) would need the buffer rescaled by
            // lr_new / lr_old on every change (Goyal et al. 2017, section 2.1, "momentum
            // correction").
            const float b = buf[i] * mom + d;
            buf[i] = b;
            if constexpr (kNesterov) {
                d = d + mom * b;
            } else {
                d = b;
            }
        }
        p[i] = p[i] - lr * d;
    }
}

using LarsUpdateFn = void (*)(float* __restrict, const float* __restrict, float* __restrict,
                              std::size_t, LarsCoefficients);

template <bool kDecay>
LarsUpdateFn pick_lars_update(bool momentum, bool nesterov) {
    if (!momentum) {
        return &update<kDecay, false, false>;
    }
    return nesterov ? &update<kDecay, true, true> : &update<kDecay, true, false>;
}

}  // namespace

Lars::Lars(std::vector<ParamSegment> segments, LarsConfig config)
    : config_(config), segments_(std::move(segments)) {
    check_config(config_);
    extent_ = detail::check_segments(segments_);
    if (config_.momentum != 0) {
        // Zero, not "meaningless until the first step" as in Sgd: momentum * 0 + d = d, so the
        // first step's buf = d falls out of the running formula.
        momentum_.assign(extent_, 0.0f);
    }
    local_lrs_.assign(segments_.size(), 1.0);
}

void Lars::step(std::span<float> params, std::span<const float> grads, double lr) {
    detail::check_step(name(), params, grads, extent_, lr);

    const bool momentum = config_.momentum != 0;
    const LarsUpdateFn with_decay = pick_lars_update<true>(momentum, config_.nesterov);
    const LarsUpdateFn without_decay = pick_lars_update<false>(momentum, config_.nesterov);
    LarsCoefficients c{};
    c.lr = static_cast<float>(lr);
    c.momentum = static_cast<float>(config_.momentum);

    float* p = params.data();
    const float* g = grads.data();
    float* buf = momentum_.data();  // null when momentum == 0; those kernels never touch it
    for (std::size_t s = 0; s < segments_.size(); ++s) {
        const ParamSegment& segment = segments_[s];
        if (segment.size == 0) {
            continue;
        }
        const double wd = weight_decay_of(config_, segment);
        double local = 1.0;
        if (is_adapted(config_, segment)) {
            float* w = p + segment.offset;
            const double w_norm = detail::l2_norm(w, segment.size);
            const double g_norm = detail::l2_norm(g + segment.offset, segment.size);
            // Both norms > 0, so the denominator is > 0 and the ratio finite and > 0.
            if (w_norm > 0 && g_norm > 0) {
                local = config_.trust_coefficient * w_norm / (g_norm + wd * w_norm);
                if (config_.larc) {
                    // Apex LARC's clip: adaptive_lr = min(adaptive_lr / group_lr, 1), so the
                    // step lr * local = min(eta ||w|| / (||g|| + wd ||w||), lr): the local lr
                    // caps the global one and never raises it. lr == 0 updates nothing anyway;
                    // take 1 rather than divide by it.
                    local = lr > 0 ? std::min(local / lr, 1.0) : 1.0;
                }
            }
        }
        local_lrs_[s] = local;
        c.weight_decay = static_cast<float>(wd);
        c.local_lr = static_cast<float>(local);
        // wd == 0 takes the loop without the decay term, as Sgd: 0 * p is not always 0.
        const LarsUpdateFn fn = wd != 0 ? with_decay : without_decay;
        fn(p + segment.offset, g + segment.offset, buf == nullptr ? nullptr : buf + segment.offset,
           segment.size, c);
    }
    ++steps_;
}

}  // namespace scalelab::optim
