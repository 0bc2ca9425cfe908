#include "train/gradient_reducer.h"

#include <algorithm>
#include <optional>
#include <stdexcept>
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
    // One rank reduces nothing (start_reduce), so nothing waits for its gradients, and its
    // backend waits for no all-reduce.
    if (comm.size() > 1) {
        for (std::size_t i = 0; i < buckets_.size(); ++i)
            ready_.push_back(backend_.make_fence());
        if (overlap_)
            reduced_fence_ = comm_.make_fence();
    }
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
    // The last step's buckets are all reduced (complete() waited for them), unless an error
    // ended it, and the run with it: a step after that could find the communication thread
    // still busy with the failed one.
    if (step_open_)
        throw std::logic_error("GradientReducer::begin before the last step's complete()");
    step_open_ = true;
    accumulated_ = accumulated;
    step_start_ = step_start;
    next_ = 0;
    local_sq_norm_ = 0;
    std::lock_guard lock(mutex_);
    started_ = 0;
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

bool GradientReducer::start_reduce(std::size_t index) {
    // One rank's average is its own gradient: nothing to communicate (through NCCL, a group of
    // one GPU would still pay a call and a wait per bucket, every step).
    if (comm_.size() == 1)
        return false;
    const Bucket& b = buckets_[index];
    const bool last = index + 1 == buckets_.size();
    const std::optional<double> seconds = comm_.start_all_reduce_after(
        *ready_[index], grads_.subspan(b.begin, b.end - b.begin), comm::ReduceOp::Average,
        last ? reduced_fence_.get() : nullptr);
    if (seconds)
        record_span(index, *seconds);
    return !seconds;
}

void GradientReducer::end_reduce(std::size_t index) {
    record_span(index, comm_.finish_all_reduce());
}

void GradientReducer::record_span(std::size_t index, double seconds) {
    // The span ends now, when this thread sees the all-reduce complete, and lasts as long as the
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
        // After an error the step's later buckets make no collective: the other ranks may
        // never join them. They still count, so that finish() and complete() return.
        const bool failed = error_ != nullptr;
        lock.unlock();
        std::exception_ptr error;
        bool running = false;
        if (!failed) {
            try {
                running = start_reduce(index);
            } catch (...) {
                error = std::current_exception();
            }
        }
        lock.lock();
        keep_first(error);
        ++started_;
        done_.notify_one();
        if (running) {
            lock.unlock();
            try {
                end_reduce(index);
            } catch (...) {
                error = std::current_exception();
            }
            lock.lock();
            keep_first(std::move(error));
        }
        ++reduced_;
        done_.notify_one();
    }
}

void GradientReducer::keep_first(std::exception_ptr error) {
    if (error && !error_)
        error_ = std::move(error);
}

void GradientReducer::rethrow_error() {
    if (error_)
        std::rethrow_exception(std::exchange(error_, nullptr));
}

void GradientReducer::finish() {
    launch_ready(grads_.size());  // whatever backward did not announce
    if (comm_.size() > 1)
        local_sq_norm_ = backend_.take_squared_norm();
    if (!overlap_) {
        for (std::size_t i = 0; i < buckets_.size(); ++i)
            if (start_reduce(i))
                end_reduce(i);
        return;
    }
    {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return started_ == buckets_.size(); });
        rethrow_error();
    }
    // The optimiser reads the averaged gradients: its work follows the last all-reduce, which
    // follows the others (one communicator, in order).
    if (reduced_fence_)
        backend_.wait_for(*reduced_fence_);
}

void GradientReducer::complete() {
    if (overlap_) {
        std::unique_lock lock(mutex_);
        done_.wait(lock, [&] { return reduced_ == buckets_.size(); });
        rethrow_error();
    }
    step_open_ = false;
}

}  // namespace scalelab
