#include "data/sampler.h"

#include <cstdint>
#include <limits>
#include <numeric>
#include <string>

#include "data/rng.h"
#include "error.h"

namespace scalelab::data {

EpochSampler::EpochSampler(std::size_t count, std::uint64_t seed, int ranks, int rank)
    : count_(count), seed_(seed), ranks_(ranks), rank_(rank) {
    if (ranks < 1 || rank < 0 || rank >= ranks) {
        throw Error(ErrorKind::InvalidSpec, "sampler: rank " + std::to_string(rank) + " of " +
                                                std::to_string(ranks) +
                                                " devices is not a valid device");
    }
    if (count < std::size_t(ranks)) {
        throw Error(ErrorKind::InvalidSpec,
                    "a dataset of " + std::to_string(count) + " images cannot be split across " +
                        std::to_string(ranks) + " devices; use fewer devices or more images");
    }
    if (count > std::numeric_limits<std::uint32_t>::max()) {
        throw Error(ErrorKind::InvalidSpec, "a dataset of " + std::to_string(count) +
                                                " images is too large; at most 2^32 - 1 are "
                                                "supported");
    }
}

std::vector<std::uint32_t> EpochSampler::indices(int epoch) const {
    // Every rank computes the same full permutation and keeps its share: with a few devices
    // and ~1e5 samples that is a millisecond per epoch, and it needs no communication.
    std::vector<std::uint32_t> perm(count_);
    std::iota(perm.begin(), perm.end(), std::uint32_t(0));
    SplitMix64 rng(derive_seed(seed_, std::uint64_t(std::int64_t(epoch))));
    for (std::size_t i = count_ - 1; i > 0; --i) {
        std::swap(perm[i], perm[rng.below(i + 1)]);
    }

    std::vector<std::uint32_t> mine(per_rank());
    for (std::size_t k = 0; k < mine.size(); ++k) {
        mine[k] = perm[std::size_t(rank_) + k * std::size_t(ranks_)];
    }
    return mine;
}

}  // namespace scalelab::data
