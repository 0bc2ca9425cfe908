#pragma once

#include <span>
#include <vector>

namespace scalelab {

// TensorBoard's debiased exponential moving average, the smoothing users of training dashboards
// know. Over the finite values, with n counting them so far:
//     last = last * weight + (1 - weight) * y;   out = last / (1 - weight^n)
// The division removes the bias towards the zero the average starts from, so the first points
// follow the data instead of rising from 0.
//
// Non-finite values (NaN, inf: a diverged step) are passed through and leave the average as it
// was. A constant series (every finite value equal) and weight 0 return the values unchanged.
// `weight` must lie in [0, 1); anything else throws std::invalid_argument naming the value.
std::vector<double> smooth_ema(std::span<const double> values, double weight);
// The same, replacing `values` (no copy: the chart grid smooths 5 x 10,000 points per group and
// chart on every redraw of a training group).
void smooth_ema_in_place(std::span<double> values, double weight);

}  // namespace scalelab
