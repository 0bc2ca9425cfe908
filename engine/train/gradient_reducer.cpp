#include "train/gradient_reducer.h"

#include <algorithm>
#include <utility>

namespace scalelab {

std::vector<Bucket> plan_buckets(std::span<const std::size_t> param_ends, std::size_t first_bytes,
                                 std::size_t cap_bytes) {
    // A bucket closes at the first parameter boundary where it has reached its cap.
    std::vector<Bucket> buckets;
    std::size_t begin = 0;
    std::size_t cap = std::max<std::size_t>(1, first_bytes / sizeof(float));
    for (std::size_t end : param_ends) {
        if (end - begin >= cap) {
            buckets.push_back({begin, end});
            begin = end;
            cap = std::max<std::size_t>(1, cap_bytes / sizeof(float));
        }
    }
    if (!param_ends.empty() && begin < param_ends.back())
        buckets.push_back({begin, param_ends.back()});
    return buckets;
}

GradientReducer::GradientReducer(Backend& backend, comm::Communicator& comm, std::span<float> grads,
                                 std::vector<Bucket> buckets, bool overlap)
    : backend_(backend),
      comm_(comm),
      grads_(grads),
      buckets_(std::move(buckets)),
      overlap_(overlap),
      spans_(comm.size() > 1 ? buckets_.size() : 0) {
    // One rank reduces nothing (reduce), so nothing waits for its gradients.
    if (comm.size() > 1)
        for (std::size_t i = 0; i < buckets_.size(); ++i)
            ready_.push_back(backend_.make_fence());
    if (overlap_)
        thread_ = std::thread([this] { communicate(); });
}

GradientReducer::~GradientReducer() {
    if (!thread_.joinable())
        return;
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    work_.notify_one();
    thread_.join();
}

void GradientReducer::begin(std::span<const float> accumulated, Clock::time_point step_start) {
    accumulated_ = accumulated;
    step_start_ = step_start;
    next_ = 0;
    local_sq_norm_ = 0;
    std::lock_guard lock(mutex_);
    reduced_ = 0;
}

void GradientReducer::gradients_written(const float* written_end) {
    launch_ready(std::size_t(written_end - grads_.data()));
}

void GradientReducer::launch_ready(std::size_t written) {
    while (next_ < buckets_.size() && buckets_[next_].end <= written) {
        const Bucket& b = buckets_[next_];
        const std::span<float> bucket = grads_.subspan(b.begin, b.end - b.begin);
        if (!accumulated_.empty())  // the step's earlier micro-batches, added in before reducing
            backend_.add_to(accumulated_.subspan(b.begin, b.end - b.begin), bucket);
        // The local gradient's norm for the noise scale, while the bucket is still this
        // device's own (and in cache): no extra pass over memory. One device has no local
        // gradient distinct from the averaged one, and nothing to all-reduce, so it skips both.
        if (comm_.size() > 1) {
            backend_.accumulate_squared_norm(bucket);
            ready_[next_]->mark();
        }
        if (overlap_) {
            {
                std::lock_guard lock(mutex_);
                queue_.push_back(next_);
            }
            work_.notify_one();
        }
        ++next_;
    }
}

void GradientReducer::reduce(std::size_t index) {
    // One rank's average is its own gradient: nothing to communicate (through NCCL, a group of
    // one GPU would still pay a call and a wait per bucket, every step).
    if (comm_.size() == 1)
        return;
    const Bucket& b = buckets_[index];
    const double seconds = comm_.all_reduce_after(
        *ready_[index], grads_.subspan(b.begin, b.end - b.begin), comm::ReduceOp::Average);
    // The span ends when this thread sees the all-reduce complete and lasts as long as the
    // communicator measured it (on a GPU, between CUDA events: without the wait for backward).
    const double end = std::chrono::duration<double>(Clock::now() - step_start_).count();
    spans_[index] = {end - seconds, end};
}

void GradientReducer::communicate() {
    std::unique_lock lock(mutex_);
    for (;;) {
        work_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
        if (queue_.empty())
            return;  // stopping, and nothing left to reduce
        const std::size_t index = queue_.front();
        queue_.pop_front();
        const bool failed = error_ != nullptr;
        lock.unlock();
        std::exception_ptr error;
        try {
            if (!failed)
                reduce(index);
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        if (error && !error_)
            error_ = error;
        ++reduced_;
        done_.notify_one();
    }
}

void GradientReducer::finish() {
    launch_ready(grads_.size());  // whatever backward did not announce
    if (comm_.size() > 1)
        local_sq_norm_ = backend_.take_squared_norm();
    if (!overlap_) {
        for (std::size_t i = 0; i < buckets_.size(); ++i)
            reduce(i);
        return;
    }
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return reduced_ == buckets_.size(); });
    if (error_)
        std::rethrow_exception(std::exchange(error_, nullptr));
}

}  // namespace scalelab
