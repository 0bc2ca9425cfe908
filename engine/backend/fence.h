#pragma once

namespace scalelab {

// A point in a backend's stream of work. mark() is called on the backend's thread; wait() may be
// called from any thread and returns once all the work the backend had been given before the
// mark() is done. The CPU's work is done when its call returns, so its fences never wait; a
// GPU's fence is an event on its stream. This is how a gradient bucket's all-reduce knows that
// the bucket's gradients are written (comm::Communicator::all_reduce_after): on the CPU by
// waiting for the fence, with NCCL by having its stream wait for the fence's event.
class Fence {
  public:
    virtual ~Fence() = default;
    virtual void mark() = 0;
    virtual void wait() = 0;
};

}  // namespace scalelab
