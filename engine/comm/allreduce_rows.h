#pragma once

#include <cstddef>
#include <vector>

#include "comm/allreduce_benchmark.h"

namespace scalelab::comm {

// What every all-reduce benchmark shares, whatever moves the bytes (CPU threads with ThreadComm,
// GPUs with NCCL): the argument checks and the arithmetic of a row.

// Throws Error(InvalidSpec) for devices outside 1..allreduce_max_devices, iterations < 1 or a
// size below one float, each message saying what was given.
void check_allreduce_arguments(int devices, const std::vector<std::size_t>& sizes_bytes,
                               int iterations);

// The row of one size from seconds[rank][iteration], every rank's timed iterations (the same
// number on each): an iteration lasts until its slowest rank is done, and the row reports the
// median of those times with the nccl-tests bandwidths (see AllReduceRow). `bytes` is the buffer
// each rank reduced, a whole number of floats.
AllReduceRow allreduce_row(int devices, std::size_t bytes,
                           const std::vector<std::vector<double>>& seconds);

}  // namespace scalelab::comm
