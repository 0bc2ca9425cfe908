#pragma once

#include <memory>
#include <optional>
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
//  - a call blocks until the collective is complete for this rank (start_all_reduce_after
//    may return before: then its finish_all_reduce does); waiting blocks the thread, it does
//    not spin (devices may outnumber cores);
//  - abort() may be called from any thread, at any time, and wakes every waiter with Aborted.
class Communicator {
  public:
    virtual ~Communicator() = default;
    virtual int rank() const = 0;
    virtual int size() const = 0;

    // In place: data <- op over ranks of data.
    virtual void all_reduce(std::span<float> data, ReduceOp op) = 0;
    // all_reduce of data that a backend may still be writing, in up to two halves, so that other
    // work can follow the all-reduce without the host waiting for it in between.
    // start_all_reduce_after starts it once the work that backend had been given before
    // ready.mark() is done, and marks `done` (a fence of this communicator's make_fence(), or
    // nullptr) right behind it: a backend that waits for `done` (Backend::wait_for) runs its
    // later work after the all-reduce. Where start completes the all-reduce, it returns the
    // seconds the all-reduce itself took (the wait for `ready` left out; the wait for the other
    // ranks to join, as in any collective, counted). Where it returns nothing, the all-reduce is
    // still running, and finish_all_reduce, on the same thread and before any other collective
    // of this rank, returns when it is complete, like all_reduce, with those seconds, and throws
    // its errors.
    // This default completes it in start: it waits for `ready` on the calling thread, then
    // times all_reduce with the host clock. NCCL's start enqueues the all-reduce on its
    // communication stream behind the fence's event and returns nothing (the host never waits
    // for backward); it is timed with two CUDA events around it.
    virtual std::optional<double> start_all_reduce_after(Fence& ready, std::span<float> data,
                                                         ReduceOp op, Fence* done);
    virtual double finish_all_reduce();
    // Both halves, one after the other: returns the seconds.
    double all_reduce_after(Fence& ready, std::span<float> data, ReduceOp op);
    // A fence in this communicator's stream of collectives, for start_all_reduce_after's `done`.
    // The default's collectives are complete when start returns: its fence never waits.
    virtual std::unique_ptr<Fence> make_fence();
    // In place: data <- root's data.
    virtual void broadcast(std::span<float> data, int root) = 0;
    // out[r * in.size() ... (r + 1) * in.size()) <- rank r's in; out.size() == size() * in.size().
    virtual void all_gather(std::span<const float> in, std::span<float> out) = 0;
    virtual void barrier() = 0;
    virtual void abort(const std::string& reason) = 0;

    // The seconds this rank's collectives have spent so far exchanging with other processes
    // (HierarchicalComm's step 2, on the local rank that makes it); 0 for a communicator inside
    // one process. Read between collectives: a step's part is the difference.
    virtual double seconds_between_processes() const { return 0; }
};

}  // namespace scalelab::comm
