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
//
// A training step (DeviceWorker::train_step) feeds it through the step calls below, in this
// order, and reads the squared norms it asks for from the backend:
//   start_step                                      which gradients are the small ones
//   reads_micro_batch / add_micro_batch             each micro-batch's own, on one device
//   local_small_squared_norm                        this device's |G_small|^2, to sum over devices
//   reads_big_squared_norm / finish_step            |G_big|^2 of the averaged gradient, and add
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

    // A step of `samples` samples on each of `devices` devices, in `micro_batches`
    // micro-batches. The small-batch gradients: with several devices, each device's own
    // gradient (B_small = samples); on one device, each micro-batch's when there are several
    // (B_small = samples / micro_batches).
    void start_step(int devices, int micro_batches, int samples) {
        devices_ = devices;
        micro_batches_ = micro_batches;
        samples_ = samples;
        per_micro_batch_ = devices == 1 && micro_batches > 1;
        micro_sq_sum_ = 0;
    }

    // Whether a micro-batch's gradient, just written, is one of the small ones: with
    // micro-batches as the small batches, every one but the last. The last one's gradient is not
    // on its own any more (the gradient reducer adds the earlier ones in as backward goes), so
    // the small-batch estimate averages the others: every micro-batch's squared norm has the
    // same expectation.
    bool reads_micro_batch(bool last) const { return per_micro_batch_ && !last; }

    // The squared norm of a micro-batch's gradient of loss_sum / samples over `size` samples:
    // its mean gradient times size / samples, so the mean's squared norm is
    // sq_norm (samples / size)^2.
    void add_micro_batch(double sq_norm, int size) {
        micro_sq_sum_ += sq_norm * std::pow(double(samples_) / size, 2);
    }

    // This device's |G_small|^2: the mean over its micro-batches read above, or
    // `device_sq_norm`, the squared norm of its own gradient before the all-reduce.
    float local_small_squared_norm(double device_sq_norm) const {
        return per_micro_batch_ ? float(micro_sq_sum_ / (micro_batches_ - 1))
                                : float(device_sq_norm);
    }

    // Whether this step gives an estimate, once the global batch (B_big = `b_big` samples) is
    // known: one device without accumulation has a single batch size, so there is nothing to
    // estimate, and no reason to read every gradient again.
    bool reads_big_squared_norm(double b_big) const { return b_big > b_small(); }

    // Adds the step: `small_sq_sum`, local_small_squared_norm summed over the devices;
    // `big_sq_norm`, |G_big|^2 of the averaged gradient.
    void finish_step(float small_sq_sum, double big_sq_norm, double b_big) {
        add(double(small_sq_sum) / devices_, b_small(), big_sq_norm, b_big);
    }

  private:
    double b_small() const {
        return per_micro_batch_ ? double(samples_) / micro_batches_ : double(samples_);
    }

    double beta_;
    double g2_ = 0, trace_ = 0;
    std::int64_t count_ = 0;

    // The step under way (start_step).
    int devices_ = 1;
    int micro_batches_ = 1;
    int samples_ = 0;
    bool per_micro_batch_ = false;
    double micro_sq_sum_ = 0;  // sum over the micro-batches read of their mean's |g|^2
};

}  // namespace scalelab
