#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "comm/process_group.h"

namespace scalelab::comm {

// One measured size of `scalelab-cli bench allreduce`, with the nccl-tests definitions:
// algbw = bytes / time, busbw = algbw * 2 (N - 1) / N (the bytes each rank must move in a
// ring all-reduce, so that busbw compares with the memory or link bandwidth for any N).
struct AllReduceRow {
    int devices = 0;
    std::size_t bytes = 0;  // the buffer each rank reduces: a whole number of floats
    double time_ms = 0;     // median over the timed iterations of the slowest rank's time
    double algbw_GBs = 0;   // bytes / time, in 1e9 bytes per second
    double busbw_GBs = 0;   // algbw_GBs * 2 (devices - 1) / devices
};

constexpr int allreduce_max_devices = 16;
constexpr int allreduce_warmup_iterations = 5;
// Warm-up also lasts at least this long: on the project's virtual machines a thread woken from
// a blocking wait takes ~0.1-0.4 ms more until the host has seen a few hundred quick wake-ups
// (measured: 1 MB with 2 devices took 0.49 ms in the first iterations, 0.09 ms after ~0.1 s),
// and a trainer, which all-reduces every step, runs in that steady state.
constexpr double allreduce_min_warmup_seconds = 0.25;

// Measures an in-place float sum all-reduce over `devices` threads, each with its own
// ThreadComm and buffer, for each size in `sizes_bytes` (rounded down to whole floats), as
// ../shared/anchors/torch_anchor.py allreduce measures gloo: per iteration every rank fills its
// buffer with 1.0f, waits in a broadcast, then times its all_reduce; an iteration's time is the
// slowest rank's (rank 0's broadcast of whether warm-up is over lines the ranks up before each
// timed all-reduce); untimed warm-up iterations (at least 5, and at least 0.25 s), then
// `iterations` timed ones, of which the median is reported. (The anchor warms up for 5 iterations
// only; gloo's millisecond-long all-reduces do not notice the wake-up cost.)
// Throws scalelab::Error: InvalidSpec for devices outside 1..16, iterations < 1 or a size below
// one float; OutOfMemory when the buffers do not fit.
//
// Across processes (`processes` of more than one): each process runs `devices` threads, every
// rank's communicator a HierarchicalComm, and the row counts processes x devices ranks. Every
// process calls it with the same arguments; each gets the same rows.
std::vector<AllReduceRow> run_allreduce_benchmark(
    int devices, const std::vector<std::size_t>& sizes_bytes, int iterations,
    std::shared_ptr<ProcessGroup> processes = nullptr);

}  // namespace scalelab::comm
