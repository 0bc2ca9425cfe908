#pragma once

// What the fuzz targets share about their inputs: splitting one input into the several files a
// reader takes, and stopping on a broken promise of the code under test.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <vector>

namespace scalelab::fuzz {

// The files of an input made of parts, each a 4-byte big-endian length followed by that many
// bytes. A length past the end of the input takes what is left, so that every input splits
// (the mutator need not keep the lengths consistent); at most `count` parts, fewer when the
// input ends first.
inline std::vector<std::string_view> split_parts(const std::uint8_t* data, std::size_t size,
                                                 std::size_t count) {
    std::vector<std::string_view> parts;
    std::size_t at = 0;
    while (parts.size() < count && size - at >= 4) {
        const std::size_t length = std::size_t(data[at]) << 24 | std::size_t(data[at + 1]) << 16 |
                                   std::size_t(data[at + 2]) << 8 | std::size_t(data[at + 3]);
        at += 4;
        const std::size_t taken = length < size - at ? length : size - at;
        parts.emplace_back(reinterpret_cast<const char*>(data) + at, taken);
        at += taken;
    }
    return parts;
}

// A result that breaks what the code under test promises (a dataset whose sizes disagree, an
// import that changed the store although it failed) is a finding like a crash: abort, so that
// libFuzzer saves the input.
inline void require(bool holds, const char* promise) {
    if (!holds) {
        std::fprintf(stderr, "broken promise: %s\n", promise);
        std::abort();
    }
}

}  // namespace scalelab::fuzz
