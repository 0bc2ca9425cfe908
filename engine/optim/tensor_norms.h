#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "error.h"
#include "optim/format_number.h"
#include "optim/parameter_segment.h"

// What the layer-wise optimisers (LARS/LARC, LAMB, NovoGrad) and AdamW share: the L2 norm of
// one parameter tensor (one ParamSegment); and the checks on segments and step buffers that
// every optimiser, Sgd and the fused GPU ones included, makes the same way.
namespace scalelab::optim::detail {

// The sum of squares of n floats, accumulated in double. A float accumulator loses about
// log2(n) bits over a tensor of n elements (millions for a wide convolution), and a trust
// ratio is only as good as the norms it divides; double keeps the error at float rounding of
// the inputs. The reduction is vectorised, so its order is fixed by the build: the same binary
// gives the same bits.
inline double squared_norm(const float* __restrict x, std::size_t n) {
    double sum = 0.0;
#if defined(_OPENMP)
#pragma omp simd reduction(+ : sum)
#endif
    for (std::size_t i = 0; i < n; ++i) {
        const double v = x[i];
        sum += v * v;
    }
    return sum;
}

inline double l2_norm(const float* __restrict x, std::size_t n) {
    return std::sqrt(squared_norm(x, n));
}

// Checks that no two segments share a float (a shared float would be updated twice) and that
// none runs past the address space; returns the extent, max(offset + size): the shortest
// buffers step() accepts. Throws Error(Internal), as these come from the model, not the user.
inline std::size_t check_segments(const std::vector<ParamSegment>& segments) {
    std::vector<const ParamSegment*> ordered;
    ordered.reserve(segments.size());
    for (const ParamSegment& segment : segments) {
        if (segment.size > std::numeric_limits<std::size_t>::max() - segment.offset) {
            throw Error(ErrorKind::Internal,
                        "parameter segment " + segment.name + " runs past the address space");
        }
        if (segment.size > 0) {
            ordered.push_back(&segment);
        }
    }
    std::stable_sort(
        ordered.begin(), ordered.end(),
        [](const ParamSegment* a, const ParamSegment* b) { return a->offset < b->offset; });
    std::size_t extent = 0;
    const ParamSegment* previous = nullptr;
    for (const ParamSegment* segment : ordered) {
        if (previous != nullptr && segment->offset < previous->offset + previous->size) {
            throw Error(ErrorKind::Internal, "parameter segments " + previous->name + " and " +
                                                 segment->name + " overlap");
        }
        extent = segment->offset + segment->size;
        previous = segment;
    }
    return extent;
}

// The checks at the top of every step(): equal buffers covering every segment (Internal: a
// bug in the caller) and a finite lr >= 0 (InvalidSpec: it comes from the user's schedule).
inline void check_step(std::string_view optimizer, std::span<float> params,
                       std::span<const float> grads, std::size_t extent, double lr) {
    const std::string who(optimizer);
    if (params.size() != grads.size()) {
        throw Error(ErrorKind::Internal, who + " step: " + std::to_string(params.size()) +
                                             " parameters but " + std::to_string(grads.size()) +
                                             " gradients");
    }
    if (params.size() < extent) {
        throw Error(ErrorKind::Internal,
                    who + " step: buffers of " + std::to_string(params.size()) +
                        " floats, but the segments need " + std::to_string(extent));
    }
    if (!std::isfinite(lr) || lr < 0) {
        throw Error(ErrorKind::InvalidSpec,
                    "the learning rate must be a number >= 0 (got " + format_number(lr) + ")");
    }
}

// Config checks with messages that name the valid range, shared so every optimiser words them
// alike. `what` is the field as the user knows it, e.g. "LAMB beta1".
inline void require_beta(const std::string& what, double value) {
    if (!std::isfinite(value) || value < 0 || value >= 1) {
        throw Error(ErrorKind::InvalidSpec,
                    what + " must be in [0, 1) (got " + format_number(value) + ")");
    }
}

inline void require_eps(const std::string& what, double value) {
    if (!std::isfinite(value) || value <= 0) {
        throw Error(ErrorKind::InvalidSpec,
                    what + " must be a number > 0 (got " + format_number(value) +
                        "); it keeps the denominator away from 0, 1e-8 is usual");
    }
}

inline void require_weight_decay(double value) {
    if (!std::isfinite(value) || value < 0) {
        throw Error(ErrorKind::InvalidSpec, "weight decay must be a number >= 0 (got " +
                                                format_number(value) + "); use 0 for none");
    }
}

// The per-tensor ratio old / new of the layer-wise methods with the conventions every
// implementation (Apex, timm, TF) shares: 1 when either norm is 0, so a freshly zeroed tensor
// or a zero update neither stalls nor produces 0/0 = NaN.
inline double safe_ratio(double numerator, double denominator) {
    return (numerator > 0 && denominator > 0) ? numerator / denominator : 1.0;
}

}  // namespace scalelab::optim::detail
