#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace scalelab::optim {

// What a parameter is for. Optimisers need it because the large-batch methods (LARS/LARC,
// LAMB, NovoGrad) and the usual weight-decay practice treat biases and batch-norm scale/shift
// differently from weights: decaying or layer-wise adapting a one-dimensional bias or BN scale
// hurts accuracy and buys nothing, so they are commonly excluded.
enum class ParamRole {
    Weight,     // a linear or convolution weight
    Bias,       // a linear or convolution bias
    NormScale,  // batch-norm gamma
    NormShift,  // batch-norm beta
};

// One parameter tensor inside a replica's flat buffers. Every replica keeps all parameters in
// one flat float buffer and all gradients in a second one of the same length, laid out
// identically, so a parameter is the same segment [offset, offset + size) of both.
struct ParamSegment {
    std::string name;  // for messages, e.g. "conv1.weight"
    ParamRole role = ParamRole::Weight;
    std::size_t offset = 0;  // in floats, from the start of the flat buffer
    std::size_t size = 0;    // in floats
};

// True for the roles that "no weight decay / no adaptation on bias and BN" excludes.
constexpr bool is_norm_or_bias(ParamRole role) {
    return role == ParamRole::Bias || role == ParamRole::NormScale || role == ParamRole::NormShift;
}

// The weight decay an optimiser's config gives a segment: config.weight_decay, or 0 for a bias
// or batch-norm scale/shift when config.decay_norm_and_bias is false. Every config has both.
template <class Config>
double weight_decay_of(const Config& config, const ParamSegment& segment) {
    return config.decay_norm_and_bias || !is_norm_or_bias(segment.role) ? config.weight_decay : 0.0;
}

// weight_decay_of for each segment, rounded to T (float where the optimiser multiplies in float),
// in the segments' order.
template <class T, class Config>
std::vector<T> weight_decays_of(const Config& config, const std::vector<ParamSegment>& segments) {
    std::vector<T> decays;
    decays.reserve(segments.size());
    for (const ParamSegment& segment : segments)
        decays.push_back(static_cast<T>(weight_decay_of(config, segment)));
    return decays;
}

// Whether a layer-wise optimiser's config (LARS, LAMB, NovoGrad) adapts a segment by its norms:
// every weight, and biases and batch-norm scales/shifts when config.adapt_norm_and_bias is true.
template <class Config>
bool is_adapted(const Config& config, const ParamSegment& segment) {
    return config.adapt_norm_and_bias || !is_norm_or_bias(segment.role);
}

}  // namespace scalelab::optim
