#include "curve_smoothing.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace scalelab {

namespace {

bool is_constant(std::span<const double> values) {
    const auto first = std::find_if(values.begin(), values.end(),
                                    [](double value) { return std::isfinite(value); });
    return std::all_of(first, values.end(),
                       [&](double value) { return !std::isfinite(value) || value == *first; });
}

}  // namespace

std::vector<double> smooth_ema(std::span<const double> values, double weight) {
    std::vector<double> out(values.begin(), values.end());
    smooth_ema_in_place(out, weight);
    return out;
}

void smooth_ema_in_place(std::span<double> values, double weight) {
    if (!(weight >= 0.0 && weight < 1.0))
        throw std::invalid_argument("smoothing weight must lie in [0, 1), got " +
                                    std::to_string(weight));
    if (weight == 0.0 || is_constant(values))
        return;

    double last = 0.0;
    double weight_power = 1.0;  // weight^n
    for (double& value : values) {
        if (!std::isfinite(value))
            continue;
        last = last * weight + (1.0 - weight) * value;
        weight_power *= weight;
        // Once 1 - w^n rounds to 1 the division changes nothing. Holding w^n at 0 from there on
        // gives the same results and keeps it from sinking into denormal numbers, where it would
        // stay (the smallest one times w rounds to itself) and every multiply costs ~100 cycles.
        if (1.0 - weight_power == 1.0)
            weight_power = 0.0;
        value = last / (1.0 - weight_power);
    }
}

}  // namespace scalelab
