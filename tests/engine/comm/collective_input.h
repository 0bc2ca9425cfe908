#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scalelab::testing {

// A deterministic, varied input for rank `rank`'s element i (mixed signs and magnitudes, so the
// summation order matters for the last bits): what the collective tests reduce.
inline float collective_input(int rank, std::size_t i) {
    std::uint32_t h = static_cast<std::uint32_t>(i) * 2654435761u ^
                      (static_cast<std::uint32_t>(rank) + 1u) * 0x9E3779B9u;
    h ^= h >> 15;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    return (static_cast<float>(h % 20001u) - 10000.0f) / 1000.0f *
           (1.0f + 0.37f * static_cast<float>(rank));
}

inline void fill_collective_input(std::vector<float>& buffer, int rank) {
    for (std::size_t i = 0; i < buffer.size(); ++i)
        buffer[i] = collective_input(rank, i);
}

}  // namespace scalelab::testing
