#pragma once

#include <cmath>
#include <cstdint>
#include <limits>

namespace scalelab {

// The gradient noise scale of McCandlish et al. 2018 ("An Empirical Model of Large-Batch
// Training"), from two gradient estimates a data-parallel step has anyway: G_small, the mean
// gradient over B_small samples (one device's, before the all-reduce; or one micro-batch's),
// and G_big, over B_big samples (the all-reduced one). Their unbiased estimates (appendix A.1):
//   |G|^2     = (B_big |G_big|^2 - B_small |G_small|^2) / (B_big - B_small)
//   tr(Sigma) = (|G_small|^2 - |G_big|^2) / (1 / B_small - 1 / B_big)
// are each very noisy (single-step values can be negative), so both are averaged with a
// bias-corrected exponential average (beta) and the ratio of the averages is reported:
//   B_simple = tr(Sigma) / |G|^2
// the batch size above which a larger batch stops buying proportionally fewer steps.
class NoiseScaleEstimator {
  public:
    explicit NoiseScaleEstimator(double beta = 0.99) : beta_(beta) {}

    // |G_small|^2 as the mean over the small estimates of their squared norms.
    void add(double small_sq_norm, double b_small, double big_sq_norm, double b_big) {
        if (!(b_big > b_small) || !std::isfinite(small_sq_norm) || !std::isfinite(big_sq_norm))
            return;
        const double g2 = (b_big * big_sq_norm - b_small * small_sq_norm) / (b_big - b_small);
        const double trace = (small_sq_norm - big_sq_norm) / (1.0 / b_small - 1.0 / b_big);
        g2_ = beta_ * g2_ + (1 - beta_) * g2;
        trace_ = beta_ * trace_ + (1 - beta_) * trace;
        ++count_;
    }

    // NaN until there is an estimate (or while the averaged |G|^2 is not positive).
    double b_simple() const {
        if (count_ == 0)
            return std::numeric_limits<double>::quiet_NaN();
        const double correction = 1 - std::pow(beta_, double(count_));
        const double g2 = g2_ / correction, trace = trace_ / correction;
        return g2 > 0 ? trace / g2 : std::numeric_limits<double>::quiet_NaN();
    }

  private:
    double beta_;
    double g2_ = 0, trace_ = 0;
    std::int64_t count_ = 0;
};

}  // namespace scalelab
