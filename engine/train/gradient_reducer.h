#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "backend/backend.h"
#include "comm/communicator.h"
#include "train/metrics.h"

namespace scalelab {

// A contiguous slice [begin, end) of the flat gradient buffer, all-reduced as one message.
struct Bucket {
    std::size_t begin = 0;
    std::size_t end = 0;
};

// Cuts the flat gradient buffer (in backward order) into buckets as DDP does: the first one
// small (first_bytes) so communication starts early, the others up to cap_bytes. Bucket edges
// fall on parameter boundaries (param_ends: the end offset of each parameter, ascending) unless
// a single parameter is larger than the cap. Every rank computes the same plan from the same
// model, which is what keeps the all-reduces matched.
std::vector<Bucket> plan_buckets(std::span<const std::size_t> param_ends, std::size_t first_bytes,
                                 std::size_t cap_bytes);

// Averages one replica's gradients over all ranks, bucket by bucket, in the same order on every
// rank (with one rank there is nothing to average: no collective at all). With overlap, a
// communication thread all-reduces each bucket as soon as backward has written all of its gradients
// (gradients_written), while backward goes on with the layers below. Without overlap, finish()
// does all the all-reduces.
//
// With gradient accumulation, `accumulated` holds the sum of the step's earlier micro-batches'
// gradients; it is added into each bucket just before that bucket is reduced, so there is no
// communication until the last micro-batch.
//
// The gradients live in the backend's memory, and the backend may still be computing them when
// gradients_written() is called (a GPU runs its kernels after the calls that enqueue them): each
// bucket has a Fence, marked on the worker thread once its gradients are enqueued, that the
// bucket's all-reduce follows (Communicator::start_all_reduce_after: on a CPU device the
// reducing thread waits for it; with NCCL the communication stream waits for its event, so the
// all-reduce starts on the GPU the moment its gradients are written). Accumulation and the
// local norm are backend work too, enqueued before the mark.
//
// The work after the all-reduces (the optimiser) follows them the same way, without the host
// waiting for them: finish() returns once the last bucket's all-reduce has started (and, with
// several devices, the local gradient's norm is read: see finish()), having had the backend
// wait for the communicator's fence marked behind it (Backend::wait_for: a CPU's all-reduce is
// complete when it has started; a GPU's compute stream waits for the event on the GPU).
// complete() then waits for every all-reduce on the host, for their errors and spans: called
// once the step's work is enqueued, it costs the step nothing.
//
// Invariants, enforced where noted:
//  - every rank's buckets are all-reduced in bucket order, one at a time, by one thread: the
//    communication thread with overlap, the worker without (one communicator, one thread);
//  - a bucket's all-reduce starts after its gradients_written() (launch_ready marks its fence
//    and only then queues it), and the backend's work after finish() follows the last one;
//  - each step calls begin(), finish() and complete() in that order; an error ends the step at
//    whichever of finish() and complete() comes first after it, and later buckets of that step
//    make no collective (communicate skips them).
//
// Each bucket's all-reduce is timed by the communicator (on a GPU with CUDA events) for the
// time breakdown and the trace export; its span ends when the reducing thread sees it done.
class GradientReducer {
  public:
    // backend: the one whose memory `grads` is in, used on the worker thread only.
    GradientReducer(Backend& backend, comm::Communicator& comm, std::span<float> grads,
                    std::vector<Bucket> buckets, bool overlap);
    ~GradientReducer();
    GradientReducer(const GradientReducer&) = delete;
    GradientReducer& operator=(const GradientReducer&) = delete;

    using Clock = std::chrono::steady_clock;

    // Starts a step's last backward pass; `accumulated` is empty without accumulation. The
    // all-reduce spans of the step are measured from `step_start`.
    void begin(std::span<const float> accumulated, Clock::time_point step_start);
    // Backward has written every gradient below `written_end` (a pointer into grads).
    void gradients_written(const float* written_end);
    // Backward is over: returns once every bucket's all-reduce has started and the backend's
    // later work follows them (see the class comment). With several devices it first reads the
    // local squared norm, which waits for the backend to finish backward (on a GPU, the host
    // waits for the compute stream; the last bucket's all-reduce, which the optimiser waits for
    // anyway, runs meanwhile). Rethrows a communication error (comm::Aborted) that happened
    // before.
    void finish();
    // Blocks until every bucket is reduced; rethrows a communication error.
    void complete();

    const std::vector<Bucket>& buckets() const { return buckets_; }

    // The squared L2 norm of this device's own gradient (accumulated micro-batches included),
    // summed bucket by bucket just before each is reduced: valid after finish(), and only
    // measured when there are several devices (0 otherwise).
    double local_squared_norm() const { return local_sq_norm_; }

    // When each bucket's all-reduce ran in the last step, in bucket order, in seconds from that
    // step's step_start: valid after complete(). Empty with one rank, which communicates
    // nothing.
    std::span<const BucketSpan> spans() const { return spans_; }

  private:
    void launch_ready(std::size_t written);
    // A bucket's all-reduce (nothing with one rank): start_reduce starts it, marking the
    // communicator's fence behind the last bucket, and returns whether it is still running;
    // then end_reduce waits for it. Each records the span of the all-reduce it saw complete.
    bool start_reduce(std::size_t index);
    void end_reduce(std::size_t index);
    void record_span(std::size_t index, double seconds);
    void communicate();
    void keep_first(std::exception_ptr error);  // the step's first error, under mutex_
    void rethrow_error();                       // under mutex_

    Backend& backend_;
    comm::Communicator& comm_;
    std::span<float> grads_;
    std::vector<Bucket> buckets_;
    // One per bucket (none with one rank): its gradients are written.
    std::vector<std::unique_ptr<Fence>> ready_;
    // With overlap: the communicator's fence, marked behind the last bucket's all-reduce.
    std::unique_ptr<Fence> reduced_fence_;
    bool overlap_;
    std::span<const float> accumulated_;
    std::size_t next_ = 0;    // the next bucket to launch (worker thread only)
    bool step_open_ = false;  // between begin() and complete() (worker thread only)
    double local_sq_norm_ = 0;
    // Written by begin() before any bucket of the step is queued; each span by whichever thread
    // reduces its bucket, before it counts the bucket as reduced (under mutex_), so complete()
    // orders every write before the caller reads them.
    Clock::time_point step_start_;
    std::vector<BucketSpan> spans_;

    // With overlap: buckets queued for the communication thread, and how many it has started
    // and finished (or skipped after an error).
    std::mutex mutex_;
    std::condition_variable work_, done_;
    std::deque<std::size_t> queue_;
    std::size_t started_ = 0;
    std::size_t reduced_ = 0;
    std::exception_ptr error_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace scalelab
