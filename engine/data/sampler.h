#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace scalelab::data {

// Which samples each rank (device) visits in an epoch, as PyTorch's DistributedSampler does:
// one shuffle of 0..count-1 per epoch, a pure function of (seed, epoch), and rank r takes
// positions r, r + ranks, r + 2*ranks, ... of it. Interleaving (rather than giving each rank a
// contiguous block) makes the union of the ranks' k-th batches equal to the k-th batch of a
// single device with a ranks-times larger batch, so N devices x batch b match 1 device x
// batch N*b.
//
// Remainder rule: the permutation is truncated to a multiple of `ranks`; its last
// count % ranks entries are dropped for that epoch (PyTorch's drop_last=True), so every rank
// gets exactly per_rank() = count / ranks indices and no sample is seen twice. Which samples
// are dropped changes from epoch to epoch with the shuffle.
//
// The shuffle is Fisher-Yates on our own generator (data/rng.h), not std::shuffle, whose
// result differs between standard libraries.
class EpochSampler {
  public:
    // Throws scalelab::Error(InvalidSpec) unless ranks >= 1, 0 <= rank < ranks, and
    // ranks <= count <= 2^32 - 1 (every rank needs at least one sample).
    EpochSampler(std::size_t count, std::uint64_t seed, int ranks = 1, int rank = 0);

    // This rank's indices for `epoch`, in visiting order; per_rank() of them.
    std::vector<std::uint32_t> indices(int epoch) const;

    std::size_t per_rank() const { return count_ / std::size_t(ranks_); }

  private:
    std::size_t count_;
    std::uint64_t seed_;
    int ranks_;
    int rank_;
};

}  // namespace scalelab::data
