#include "optim/sgd.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "error.h"
#include "optim/format_number.h"
#include "optim/tensor_norms.h"

namespace scalelab::optim {

namespace {

void check_config(const SgdConfig& config) {
    const auto reject = [](const std::string& message) {
        throw Error(ErrorKind::InvalidSpec, message);
    };
    if (!std::isfinite(config.momentum) || config.momentum < 0) {
        reject("SGD momentum must be a number >= 0 (got " + format_number(config.momentum) +
               "); use 0 for plain SGD");
    }
    if (!std::isfinite(config.dampening) || config.dampening < 0) {
        reject("SGD dampening must be a number >= 0 (got " + format_number(config.dampening) + ")");
    }
    if (!std::isfinite(config.weight_decay) || config.weight_decay < 0) {
        reject("weight decay must be a number >= 0 (got " + format_number(config.weight_decay) +
               "); use 0 for none");
    }
    // As torch.optim.SGD: Nesterov's look-ahead is defined for undamped momentum only.
    if (config.nesterov && (config.momentum <= 0 || config.dampening != 0)) {
        reject("Nesterov momentum needs momentum > 0 and dampening 0 (got momentum " +
               format_number(config.momentum) + ", dampening " + format_number(config.dampening) +
               "); set a momentum or turn Nesterov off");
    }
}

// How the momentum buffer takes part in this step.
enum class Momentum {
    None,     // momentum == 0: d is used as is, no buffer
    First,    // the very first step: buf = d
    Running,  // every later step: buf = momentum * buf + (1 - dampening) * d
};

struct SgdCoefficients {
    float lr;
    float weight_decay;
    float momentum;
    float one_minus_dampening;
};

// The update over one contiguous run. Every choice is a template parameter, so each instance is
// a branch-free loop over restrict-qualified pointers that the compiler vectorises; the
// formulas are those of SgdConfig's comment, in the order PyTorch evaluates them.
template <bool kDecay, Momentum kMomentum, bool kNesterov>
void update(float* __restrict p, const float* __restrict g, float* __restrict buf, std::size_t n,
            SgdCoefficients c) {
    const float lr = c.lr;
    const float wd = c.weight_decay;
    const float mom = c.momentum;
    const float damp = c.one_minus_dampening;
    // At -O3 GCC vectorises this loop by itself; omp simd asks for it at -O2 as well (where
    // GCC 12 only tries its "very cheap" vectorisation). The engine is built with OpenMP.
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        float d = g[i];
        if constexpr (kDecay) {
            d = d + wd * p[i];
        }
        if constexpr (kMomentum != Momentum::None) {
            float b;
            if constexpr (kMomentum == Momentum::First) {
                b = d;
            } else {
                b = buf[i] * mom + damp * d;
            }
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

using SgdUpdateFn = void (*)(float* __restrict, const float* __restrict, float* __restrict,
                             std::size_t, SgdCoefficients);

template <bool kDecay>
SgdUpdateFn pick_sgd_update(Momentum momentum, bool nesterov) {
    switch (momentum) {
        case Momentum::None:
            return &update<kDecay, Momentum::None, false>;
        case Momentum::First:
            return nesterov ? &update<kDecay, Momentum::First, true>
                            : &update<kDecay, Momentum::First, false>;
        case Momentum::Running:
            return nesterov ? &update<kDecay, Momentum::Running, true>
                            : &update<kDecay, Momentum::Running, false>;
    }
    return nullptr;
}

}  // namespace

Sgd::Sgd(std::vector<ParamSegment> segments, SgdConfig config)
    : config_(config), segments_(std::move(segments)) {
    check_config(config_);

    extent_ = detail::check_segments(segments_);

    // Merge neighbours in buffer order that share a weight decay into runs. check_segments has
    // rejected overlaps, so the runs cover each parameter float once.
    std::vector<const ParamSegment*> ordered;
    ordered.reserve(segments_.size());
    for (const ParamSegment& segment : segments_) {
        if (segment.size > 0) {
            ordered.push_back(&segment);
        }
    }
    std::ranges::sort(ordered, {}, &ParamSegment::offset);
    for (const ParamSegment* segment : ordered) {
        const auto wd = static_cast<float>(weight_decay_of(config_, *segment));
        if (!runs_.empty() && runs_.back().offset + runs_.back().size == segment->offset &&
            runs_.back().weight_decay == wd) {
            runs_.back().size += segment->size;
        } else {
            runs_.push_back(Run{segment->offset, segment->size, wd});
        }
    }
    if (config_.momentum != 0) {
        momentum_.assign(extent_, 0.0f);
    }
}

void Sgd::step(std::span<float> params, std::span<const float> grads, double lr) {
    detail::check_step(name(), params, grads, extent_, lr);

    const Momentum momentum = config_.momentum == 0 ? Momentum::None
                              : steps_ == 0         ? Momentum::First
                                                    : Momentum::Running;
    // Coefficients rounded to float once, as PyTorch passes Python floats to float32 kernels;
    // 1 - dampening is formed in double first, as PyTorch's alpha=1 - dampening is.
    SgdCoefficients c{};
    c.lr = static_cast<float>(lr);
    c.momentum = static_cast<float>(config_.momentum);
    c.one_minus_dampening = static_cast<float>(1.0 - config_.dampening);
    const SgdUpdateFn with_decay = pick_sgd_update<true>(momentum, config_.nesterov);
    const SgdUpdateFn without_decay = pick_sgd_update<false>(momentum, config_.nesterov);

    float* p = params.data();
    const float* g = grads.data();
    float* buf = momentum_.data();  // null when momentum == 0; the None kernels never touch it
    for (const Run& run : runs_) {
        c.weight_decay = run.weight_decay;
        // wd == 0 takes the loop without the decay term, as PyTorch skips it: 0 * p is not
        // always 0 (inf, nan), and the loop is a little cheaper.
        const SgdUpdateFn fn = run.weight_decay != 0 ? with_decay : without_decay;
        fn(p + run.offset, g + run.offset, buf == nullptr ? nullptr : buf + run.offset, run.size,
           c);
    }
    ++steps_;
}

}  // namespace scalelab::optim
