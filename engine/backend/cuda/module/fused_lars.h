#pragma once

// optim::Lars (LARS/LARC) fused: the adapted segments' ||w|| and ||g|| in one deterministic sum
// pass (two launches on a GPU) that also sets their local lr, then one update pass.

#include <cstdint>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "backend/cuda/module/fused_optimizer_passes.h"
#include "backend/cuda/module/ieee_arithmetic.h"
#include "optim/lars.h"
#include "optim/tensor_norms.h"

namespace scalelab::cuda {

// A segment as Lars treats it.
struct LarsSegment {
    double weight_decay;  // 0 where decay does not apply
    bool decays;          // weight_decay != 0 (in double, as Lars decides)
};

// sums[0] += w^2, sums[1] += g^2 in double (detail::squared_norm's terms; each is exact).
struct LarsNormTerms {
    const float* p;
    const float* g;

    SCALELAB_HOST_DEVICE int segment(std::uint32_t) const { return 0; }

    SCALELAB_HOST_DEVICE void add(int, std::uint64_t i, double* sums) const {
        const double w = p[i];
        const double gi = g[i];
        sums[0] += w * w;
        sums[1] += gi * gi;
    }
};

// Lars's local lr of an adapted segment from its norms, in double:
//   local = eta * ||w|| / (||g|| + wd * ||w||), or 1 when a norm is 0
//   LARC: local = min(local / lr, 1), or 1 when lr == 0
// stored as the float the update multiplies by.
struct LarsLocalLr {
    const LarsSegment* segments;
    float* local_lr;  // per segment
    double trust_coefficient;
    double lr;
    bool larc;

    SCALELAB_HOST_DEVICE void operator()(std::uint32_t s, const double* sums) const {
        const double w_norm = ieee::sqrt(sums[0]);
        const double g_norm = ieee::sqrt(sums[1]);
        double local = 1.0;
        if (w_norm > 0 && g_norm > 0) {
            local = ieee::div(ieee::mul(trust_coefficient, w_norm),
                              ieee::add(g_norm, ieee::mul(segments[s].weight_decay, w_norm)));
            if (larc) {
                // std::min(local / lr, 1.0) as Lars writes it (fmin would differ on a NaN).
                const double clipped = lr > 0 ? ieee::div(local, lr) : 1.0;
                local = 1.0 < clipped ? 1.0 : clipped;
            }
        }
        local_lr[s] = static_cast<float>(local);
    }
};

struct LarsSegmentStep {
    float weight_decay;
    bool decays;
    float local_lr;
};

// Lars's formulas per float, in its order and roundings:
//   d = (g + wd * w) * local;  buf = momentum * buf + d;  d = nesterov ? d + momentum * buf : buf
//   w = w - lr * d
struct LarsUpdate {
    float* p;
    const float* g;
    float* buf;  // null when momentum == 0
    const LarsSegment* segments;
    const float* local_lr;  // per segment; 1 for those not adapted
    float lr;
    float momentum;
    bool nesterov;

    SCALELAB_HOST_DEVICE LarsSegmentStep segment(std::uint32_t s) const {
        const LarsSegment segment = segments[s];
        return LarsSegmentStep{static_cast<float>(segment.weight_decay), segment.decays,
                               local_lr[s]};
    }

    SCALELAB_HOST_DEVICE void operator()(LarsSegmentStep s, std::uint64_t i) const {
        const float w = p[i];
        float d = g[i];
        // wd == 0 skips the term, as Lars does: 0 * w is not always 0.
        if (s.decays) {
            d = ieee::add(d, ieee::mul(s.weight_decay, w));
        }
        d = ieee::mul(d, s.local_lr);
        if (buf != nullptr) {
            // buf starts at 0, so the first step gives buf = d with no special case.
            const float b = ieee::add(ieee::mul(buf[i], momentum), d);
            buf[i] = b;
            d = nesterov ? ieee::add(d, ieee::mul(momentum, b)) : b;
        }
        p[i] = ieee::sub(w, ieee::mul(lr, d));
    }
};

template <FusedOptimizerPasses Passes>
class FusedLars final : public optim::Optimizer {
  public:
    FusedLars(std::vector<optim::ParamSegment> segments, const optim::LarsConfig& config,
              typename Passes::Context context)
        : config_(config),
          segments_(std::move(segments)),
          extent_(optim::detail::check_segments(segments_)),
          chunks_(chunk_segments(segments_), 0, context),
          adapted_chunks_(adapted_chunks(segments_, config_), 2, context),
          segment_table_(segment_table(), context),
          local_lr_(std::vector<float>(segments_.size(), 1.0f), context),
          momentum_(config_.momentum != 0 ? extent_ : 0, context) {}

    std::string_view name() const override { return "lars"; }

    void step(std::span<float> params, std::span<const float> grads, double lr) override {
        optim::detail::check_step(name(), params, grads, extent_, lr);
        adapted_chunks_.template sum<2>(LarsNormTerms{params.data(), grads.data()},
                                        LarsLocalLr{segment_table_.data(), local_lr_.data(),
                                                    config_.trust_coefficient, lr, config_.larc},
                                        "fused LARS norms");
        LarsUpdate update{};
        update.p = params.data();
        update.g = grads.data();
        update.buf = momentum_.data();
        update.segments = segment_table_.data();
        update.local_lr = local_lr_.data();
        update.lr = static_cast<float>(lr);
        update.momentum = static_cast<float>(config_.momentum);
        update.nesterov = config_.nesterov;
        chunks_.update(update, "fused LARS update");
    }

  private:
    std::vector<LarsSegment> segment_table() const {
        std::vector<LarsSegment> table;
        table.reserve(segments_.size());
        for (const optim::ParamSegment& segment : segments_) {
            const double wd = optim::weight_decay_of(config_, segment);
            table.push_back(LarsSegment{wd, wd != 0});
        }
        return table;
    }

    optim::LarsConfig config_;
    std::vector<optim::ParamSegment> segments_;
    std::size_t extent_;
    typename Passes::Segments chunks_;
    typename Passes::Segments adapted_chunks_;
    typename Passes::template Array<LarsSegment> segment_table_;
    typename Passes::template Array<float> local_lr_;
    typename Passes::template Array<float> momentum_;  // empty when momentum == 0
};

}  // namespace scalelab::cuda
