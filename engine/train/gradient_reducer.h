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
// (gradients_written), while backward goes on with the layers below; finish() waits for the last
// one. Without overlap, finish() does all the all-reduces.
//
// With gradient accumulation, `accumulated` holds the sum of the step's earlier micro-batches'
// gradients; it is added into each bucket just before that bucket is reduced, so there is no
// communication until the last micro-batch.
//
// The gradients live in the backend's memory, and the backend may still be computing them when
// gradients_written() is called (a GPU runs its kernels after the calls that enqueue them): each
// bucket has a Fence, marked on the worker thread once its gradients are enqueued, that the
// bucket's all-reduce follows (Communicator::all_reduce_after: on a CPU device the reducing
// thread waits for it; with NCCL the communication stream waits for its event, so the
// all-reduce starts on the GPU the moment its gradients are written). Accumulation and the
// local norm are backend work too, enqueued before the mark.
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
    // Blocks until every bucket is reduced; rethrows a communication error (comm::Aborted).
    void finish();

    const std::vector<Bucket>& buckets() const { return buckets_; }

    // The squared L2 norm of this device's own gradient (accumulated micro-batches included),
    // summed bucket by bucket just before each is reduced: valid after finish(), and only
    // measured when there are several devices (0 otherwise).
    double local_squared_norm() const { return local_sq_norm_; }

    // When each bucket's all-reduce ran in the last step, in bucket order, in seconds from that
    // step's step_start: valid after finish(). Empty with one rank, which communicates nothing.
    std::span<const BucketSpan> spans() const { return spans_; }

  private:
    void launch_ready(std::size_t written);
    void reduce(std::size_t index);
    void communicate();

    Backend& backend_;
    comm::Communicator& comm_;
    std::span<float> grads_;
    std::vector<Bucket> buckets_;
    // One per bucket (none with one rank): its gradients are written.
    std::vector<std::unique_ptr<Fence>> ready_;
    bool overlap_;
    std::span<const float> accumulated_;
    std::size_t next_ = 0;  // the next bucket to launch (worker thread only)
    double local_sq_norm_ = 0;
    // Written by begin() before any bucket of the step is queued; each span by whichever thread
    // reduces its bucket, before it counts the bucket as reduced (under mutex_), so finish()
    // orders every write before the caller reads them.
    Clock::time_point step_start_;
    std::vector<BucketSpan> spans_;

    // With overlap: buckets queued for the communication thread, and how many it has finished.
    std::mutex mutex_;
    std::condition_variable work_, done_;
    std::deque<std::size_t> queue_;
    std::size_t reduced_ = 0;
    std::exception_ptr error_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace scalelab
