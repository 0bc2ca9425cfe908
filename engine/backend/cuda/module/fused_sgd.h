#pragma once

// optim::Sgd fused: one elementwise pass over every segment's chunks.

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_optimizer_passes.h"
#include "backend/cuda/module/ieee_arithmetic.h"
#include "optim/sgd.h"
#include "optim/tensor_norms.h"

namespace scalelab::cuda {

// How the momentum buffer takes part in this step (Sgd's Momentum).
enum class SgdMomentum : int {
    None,     // momentum == 0: d is used as is, no buffer
    First,    // the very first step: buf = d
    Running,  // every later step: buf = momentum * buf + (1 - dampening) * d
};

// Sgd's formulas per float, in its order and roundings:
//   d = g + wd * p  (only where the segment's float wd != 0, as Sgd's runs)
//   buf = d, or momentum * buf + (1 - dampening) * d;  d = nesterov ? d + momentum * buf : buf
//   p = p - lr * d
struct SgdUpdate {
    float* p;
    const float* g;
    float* buf;                 // null when momentum == 0
    const float* weight_decay;  // per segment, 0 where decay does not apply
    float lr;
    float momentum;
    float one_minus_dampening;
    SgdMomentum mode;
    bool nesterov;

    SCALELAB_HOST_DEVICE float segment(std::uint32_t s) const { return weight_decay[s]; }

    SCALELAB_HOST_DEVICE void operator()(float wd, std::uint64_t i) const {
        const float w = p[i];
        float d = g[i];
        // wd == 0 skips the term, as Sgd does: 0 * p is not always 0 (inf, nan).
        if (wd != 0.0f) {
            d = ieee::add(d, ieee::mul(wd, w));
        }
        if (mode != SgdMomentum::None) {
            const float b =
                mode == SgdMomentum::First
                    ? d
                    : ieee::add(ieee::mul(buf[i], momentum), ieee::mul(one_minus_dampening, d));
            buf[i] = b;
            d = nesterov ? ieee::add(d, ieee::mul(momentum, b)) : b;
        }
        p[i] = ieee::sub(w, ieee::mul(lr, d));
    }
};

template <FusedOptimizerPasses Passes>
class FusedSgd final : public optim::Optimizer {
  public:
    FusedSgd(std::vector<optim::ParamSegment> segments, const optim::SgdConfig& config,
             typename Passes::Context context)
        : config_(config),
          segments_(std::move(segments)),
          extent_(optim::detail::check_segments(segments_)),
          chunks_(chunk_segments(segments_), 0, context),
          weight_decay_(optim::weight_decays_of<float>(config_, segments_), context),
          momentum_(config_.momentum != 0 ? extent_ : 0, context) {}

    std::string_view name() const override { return "sgd"; }

    void step(std::span<float> params, std::span<const float> grads, double lr) override {
        optim::detail::check_step(name(), params, grads, extent_, lr);
        SgdUpdate update{};
        update.p = params.data();
        update.g = grads.data();
        update.buf = momentum_.data();
        update.weight_decay = weight_decay_.data();
        // Coefficients rounded to float once, 1 - dampening formed in double first, as Sgd.
        update.lr = static_cast<float>(lr);
        update.momentum = static_cast<float>(config_.momentum);
        update.one_minus_dampening = static_cast<float>(1.0 - config_.dampening);
        update.mode = config_.momentum == 0 ? SgdMomentum::None
                      : steps_ == 0         ? SgdMomentum::First
                                            : SgdMomentum::Running;
        update.nesterov = config_.nesterov;
        chunks_.update(update, "fused SGD update");
        ++steps_;
    }

  private:
    optim::SgdConfig config_;
    std::vector<optim::ParamSegment> segments_;
    std::size_t extent_;
    typename Passes::Segments chunks_;
    typename Passes::template Array<float> weight_decay_;  // per segment, as Sgd rounds it
    typename Passes::template Array<float> momentum_;      // empty when momentum == 0
    std::int64_t steps_ = 0;
};

}  // namespace scalelab::cuda
