#pragma once

namespace scalelab {

// A point in a stream of work: a backend's kernels, or a communicator's collectives. mark() is
// called on the thread that gives the stream its work; wait() may be called from any thread and
// returns once all the work the stream had been given before the mark() is done. The CPU's work
// is done when its call returns, so its fences never wait (DoneFence); a GPU's fence is an event
// on its stream. Fences are how work of one stream follows work of another without the host
// waiting in between: a gradient bucket's all-reduce follows the backward that wrote it
// (comm::Communicator::start_all_reduce_after), and the optimiser follows the last bucket's
// all-reduce (Backend::wait_for). On the CPU by waiting for the fence; on a GPU by having one
// stream wait for the other's event.
class Fence {
  public:
    virtual ~Fence() = default;
    virtual void mark() = 0;
    virtual void wait() = 0;
};

// The fence of work that is done when its call returns (a CPU's kernels, a blocking collective):
// there is never anything to wait for.
class DoneFence final : public Fence {
  public:
    void mark() override {}
    void wait() override {}
};

}  // namespace scalelab
