#pragma once

#include <cstdint>

namespace scalelab {

// The dropout keep-decision for element i under a given seed: a counter-based hash (splitmix64
// finaliser), so masks need no generator state, are the same on every backend, and can be drawn
// by any number of threads in any order.
constexpr bool dropout_keeps(std::uint64_t seed, std::uint64_t i, float p) {
    std::uint64_t z = seed + (i + 1) * 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    const float u = float(z >> 40) * (1.0f / 16777216.0f);  // 24 random bits in [0, 1)
    return u >= p;
}

}  // namespace scalelab
