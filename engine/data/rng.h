#pragma once

#include <cstdint>

namespace scalelab::data {

// The data layer's one random number generator: SplitMix64 (Steele, Lea and Flood, 2014).
// We use our own instead of <random>'s distributions because their output is
// implementation-defined, and the synthetic images, the epoch shuffles and the augmentation
// must be the same bytes on every machine and standard library. SplitMix64 passes BigCrush,
// has a 64-bit state that is cheap to derive from (seed, epoch, index) tuples, and needs only
// integer arithmetic, so nothing depends on the platform's floating point.
class SplitMix64 {
  public:
    explicit SplitMix64(std::uint64_t seed) : state_(seed) {}

    std::uint64_t next() {
        state_ += 0x9e3779b97f4a7c15ULL;
        return finalize(state_);
    }

    // Uniform in [0, n) without modulo bias: rejects the few values below 2^64 mod n.
    // n must be > 0.
    std::uint64_t below(std::uint64_t n) {
        const std::uint64_t threshold = (0 - n) % n;  // == 2^64 mod n
        for (;;) {
            const std::uint64_t r = next();
            if (r >= threshold) {
                return r % n;
            }
        }
    }

    // Uniform integer in [lo, hi], both inclusive; requires lo <= hi.
    std::int64_t range(std::int64_t lo, std::int64_t hi) {
        return lo + std::int64_t(below(std::uint64_t(hi - lo) + 1));
    }

    // SplitMix64's output function: a bijective avalanche mix of 64 bits.
    static std::uint64_t finalize(std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }

  private:
    std::uint64_t state_;
};

// A seed for an independent stream named by (seed, a, b): e.g. (run seed, epoch, sample).
// Mixing each component through the finaliser keeps nearby tuples ((s, 1, 2) vs (s, 2, 1))
// far apart.
inline std::uint64_t derive_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0) {
    std::uint64_t h = SplitMix64::finalize(seed + 0x9e3779b97f4a7c15ULL);
    h = SplitMix64::finalize(h ^ (a + 0x632be59bd9b4e019ULL));
    h = SplitMix64::finalize(h ^ (b + 0x85157af5ULL));
    return h;
}

}  // namespace scalelab::data
