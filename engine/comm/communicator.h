#pragma once

#include <span>
#include <stdexcept>
#include <string>

#include "backend/fence.h"

namespace scalelab::comm {

enum class ReduceOp { Sum, Average };

// Thrown in every rank blocked in (or later entering) a collective after abort(): the run is
// over, and the message says why (the first abort's reason).
class Aborted : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Collectives between the `size()` ranks of one data-parallel group, as NCCL and gloo offer
// them. The contract every implementation keeps:
//  - every rank calls the same collectives in the same order with the same sizes (the caller's
//    invariant; a mismatch is a bug, and implementations may detect it and throw);
//  - results are bit-identical on every rank and from run to run (a fixed summation order);
//  - a call blocks until the collective is complete for this rank; waiting blocks the thread,
//    it does not spin (devices may outnumber cores);
//  - abort() may be called from any thread, at any time, and wakes every waiter with Aborted.
class Communicator {
  public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;

    // In place: data <- op over ranks of data.
    virtual void all_reduce(std::span<float> data, ReduceOp op) = 0;
    // all_reduce of data that a backend may still be writing: it starts once the work that
    // backend had been given before ready.mark() is done, and returns when it is complete, like
    // all_reduce, with the seconds the all-reduce itself took (the wait for `ready` left out;
    // the wait for the other ranks to join, as in any collective, counted).
    // This default waits for `ready` on the calling thread, then times all_reduce with the host
    // clock. NCCL's has its communication stream wait for the fence's event instead (the host
    // never waits for backward) and times the all-reduce with two CUDA events around it.
    virtual double all_reduce_after(Fence& ready, std::span<float> data, ReduceOp op);
    // In place: data <- root's data.
    virtual void broadcast(std::span<float> data, int root) = 0;
    // out[r * in.size() ... (r + 1) * in.size()) <- rank r's in; out.size() == size() * in.size().
    virtual void all_gather(std::span<const float> in, std::span<float> out) = 0;
    virtual void barrier() = 0;
    virtual void abort(const std::string& reason) = 0;
};

}  // namespace scalelab::comm
