#pragma once

#include <cmath>
#include <cstdint>

namespace scalelab::optim {

// The coefficients of Adam's moments in step t = 1, 2, ..., as AdamW and LAMB use them on the CPU
// and, fused, on the GPU:
//   m = beta1 m + (1 - beta1) g,   v = beta2 v + (1 - beta2) g^2
//   mhat = m / (1 - beta1^t),      vhat = v / (1 - beta2^t)
// The bias correction undoes the zero start: on the first step m = (1 - beta1) g, so mhat = g;
// likewise v. Each coefficient is formed in double and rounded to float once, here, so that every
// implementation multiplies by the same floats.
struct AdamMoments {
    float beta1;
    float one_minus_beta1;
    float beta2;
    float one_minus_beta2;
    float inv_bias1;  // 1 / (1 - beta1^t)
    float inv_bias2;  // 1 / (1 - beta2^t)
    float eps;
};

// The coefficients of step `t` (1 for the first step).
inline AdamMoments adam_moments(double beta1, double beta2, double eps, std::int64_t t) {
    const auto steps = static_cast<double>(t);
    return AdamMoments{static_cast<float>(beta1),
                       static_cast<float>(1.0 - beta1),
                       static_cast<float>(beta2),
                       static_cast<float>(1.0 - beta2),
                       static_cast<float>(1.0 / (1.0 - std::pow(beta1, steps))),
                       static_cast<float>(1.0 / (1.0 - std::pow(beta2, steps))),
                       static_cast<float>(eps)};
}

}  // namespace scalelab::optim
