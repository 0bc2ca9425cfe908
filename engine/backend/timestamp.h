#pragma once

namespace scalelab {

// A point in a backend's stream of work that tells when the work given before it was done: the
// ends of a step's phases in the time breakdown (StepTimeline). Both calls are made on the
// backend's thread: mark() sets the point after the work given so far; seconds_since(earlier)
// waits until that work is done and returns the seconds from `earlier` (a timestamp of the same
// backend, marked before this one) to this point.
//
// A CPU's work is done when its call returns, so its timestamp is the host clock at mark(). A
// GPU's is an event on its stream, and the seconds are the GPU's own (cudaEventElapsedTime):
// marking costs no synchronisation, so a step can enqueue phase after phase and wait once, at
// its end, for all of them.
class Timestamp {
  public:
    virtual ~Timestamp() = default;
    virtual void mark() = 0;
    virtual double seconds_since(Timestamp& earlier) = 0;
};

}  // namespace scalelab
