#include "comm/thread_comm.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <utility>

namespace scalelab::comm {

namespace {

// Slices start at multiples of 16 floats (64 bytes, one cache line when the buffer is
// aligned), so two ranks never write into the same cache line (no false sharing) and the
// vector loops start aligned.
constexpr std::size_t kSliceAlign = 16;

// All-reduce works through its slice in chunks of this many floats (16 KB): a chunk of the
// accumulator plus one chunk of the rank being added (32 KB) stay in the 48 KB L1d while the
// N - 1 passes over it run, so each rank's buffer is read from memory once and the partial sums
// never go back to memory between passes.
constexpr std::size_t kChunkFloats = 4096;

// The inner loops: plain loops over restrict-qualified pointers, which GCC vectorises; omp simd
// asks for it even where -O2 would not (the engine is built with OpenMP, as optim/sgd.cpp).
// Every element is computed with the same float operations in the same order whatever the
// vector width, so the results do not depend on the instruction set.
//
// The engine is built for baseline x86-64 (SSE2). On x86-64 GCC also compiles these loops for
// AVX2 and AVX-512 and picks one when the program loads (target_clones): measured on this
// project's 2-core Xeon, 2 devices, 64 MB, algbw went from ~14 GB/s (SSE2) to ~18 GB/s
// (AVX-512); 16 MB (in cache) from ~23 to ~24.5 GB/s.
// Not in sanitizer builds: the clone resolver (an ifunc) runs while the program is being
// loaded, before the ThreadSanitizer runtime is set up, and crashes there; those builds check
// correctness, and every clone computes the same bits.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
#define SCALELAB_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SCALELAB_VECTOR_CLONES
#endif

// acc[i] = acc[i] + x[i]
SCALELAB_VECTOR_CLONES void add_into(float* __restrict acc, const float* __restrict x,
                                     std::size_t n) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i)
        acc[i] = acc[i] + x[i];
}

// acc[i] = (acc[i] + x[i]) * scale: the last addition of an average, then its one multiply.
SCALELAB_VECTOR_CLONES void add_scale_into(float* __restrict acc, const float* __restrict x,
                                           float scale, std::size_t n) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i)
        acc[i] = (acc[i] + x[i]) * scale;
}

// Two ranks, one pass with no chunking: s = a + b, stored in both. Each float of both buffers
// is read once and written once, the least memory traffic an in-place all-reduce can have;
// with 2 ranks this is the common case (and the benchmark's).
SCALELAB_VECTOR_CLONES void sum_pair(float* __restrict a, float* __restrict b, std::size_t n) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        const float s = a[i] + b[i];
        a[i] = s;
        b[i] = s;
    }
}

// The same for Average: s = (a + b) * scale.
SCALELAB_VECTOR_CLONES void average_pair(float* __restrict a, float* __restrict b, float scale,
                                         std::size_t n) {
#if defined(_OPENMP)
#pragma omp simd
#endif
    for (std::size_t i = 0; i < n; ++i) {
        const float s = (a[i] + b[i]) * scale;
        a[i] = s;
        b[i] = s;
    }
}

void copy_floats(float* dst, const float* src, std::size_t n) {
    if (n != 0 && dst != src)
        std::memcpy(dst, src, n * sizeof(float));
}

const char* kind_name(int kind) {
    switch (kind) {
        case 0:
            return "all_reduce";
        case 1:
            return "broadcast";
        default:
            return "all_gather";
    }
}

}  // namespace

Slice slice_of(std::size_t n, int size, int rank) {
    // ceil(n / size) rounded up to a multiple of kSliceAlign: rank r gets
    // [min(r * per, n), min((r + 1) * per, n)), so the last ranks may get less or nothing.
    const std::size_t ranks = static_cast<std::size_t>(size);
    const std::size_t per = (n + ranks - 1) / ranks;
    const std::size_t aligned = (per + kSliceAlign - 1) / kSliceAlign * kSliceAlign;
    const std::size_t r = static_cast<std::size_t>(rank);
    return {std::min(r * aligned, n), std::min((r + 1) * aligned, n)};
}

// ---- ThreadGroup ----

// About 20-50 microseconds of polling (a pause instruction is 10-140 cycles, by CPU).
constexpr int kSpinPolls = 4000;

std::shared_ptr<ThreadGroup> ThreadGroup::create(int size, bool spin) {
    return std::make_shared<ThreadGroup>(size, spin);
}

ThreadGroup::ThreadGroup(int size, bool spin) : size_(size), spin_(spin) {
    if (size < 1)
        throw std::invalid_argument("a thread group needs at least 1 rank (got " +
                                    std::to_string(size) + ")");
    slots_.resize(static_cast<std::size_t>(size));
}

std::unique_ptr<ThreadComm> ThreadGroup::communicator(int rank) {
    return std::make_unique<ThreadComm>(shared_from_this(), rank);
}

void ThreadGroup::abort(const std::string& reason) {
    {
        std::lock_guard lock(mutex_);
        if (aborted_flag_.load(std::memory_order_relaxed))
            return;  // the first reason is the one every rank reports
        reason_ = reason;
        aborted_flag_.store(true, std::memory_order_release);
    }
    all_arrived_.notify_all();
}

void ThreadGroup::throw_aborted() {
    std::string reason;
    {
        std::lock_guard lock(mutex_);
        reason = reason_;
    }
    throw Aborted(reason);
}

std::string ThreadGroup::slot_mismatch() const {
    const Slot& first = slots_[0];
    for (std::size_t r = 1; r < slots_.size(); ++r) {
        const Slot& s = slots_[r];
        if (s.kind != first.kind || s.count != first.count || s.out_count != first.out_count ||
            s.op_or_root != first.op_or_root) {
            const auto describe = [](std::size_t rank, const Slot& slot) {
                std::string text = "rank " + std::to_string(rank) + " called " +
                                   kind_name(static_cast<int>(slot.kind)) + " of " +
                                   std::to_string(slot.count) + " floats";
                if (slot.kind == Kind::AllGather)
                    text += " into " + std::to_string(slot.out_count);
                if (slot.kind == Kind::Broadcast)
                    text += " from root " + std::to_string(slot.op_or_root);
                if (slot.kind == Kind::AllReduce)
                    text += slot.op_or_root == static_cast<int>(ReduceOp::Sum) ? " (sum)"
                                                                               : " (average)";
                return text;
            };
            return "mismatched collective: " + describe(0, first) + ", " + describe(r, s) +
                   " (every rank must call the same collectives in the same order with the "
                   "same sizes)";
        }
    }
    return {};
}

void ThreadGroup::wait_all(bool abortable, bool check_slots) {
    std::unique_lock lock(mutex_);
    if (abortable && aborted_flag_.load(std::memory_order_relaxed)) {
        lock.unlock();
        throw_aborted();
    }
    const std::uint64_t generation = generation_;
    if (++arrived_ == size_) {
        arrived_ = 0;
        if (check_slots) {
            if (std::string problem = slot_mismatch(); !problem.empty()) {
                // Every rank is here, so every rank sees this and throws; none touches a
                // buffer. The generation does not complete.
                if (!aborted_flag_.load(std::memory_order_relaxed)) {
                    reason_ = problem;
                    mismatch_ = true;
                    aborted_flag_.store(true, std::memory_order_release);
                }
                lock.unlock();
                all_arrived_.notify_all();
                throw std::logic_error(problem);
            }
        }
        ++generation_;
        completed_.store(generation_, std::memory_order_release);
        lock.unlock();
        all_arrived_.notify_all();
        return;
    }
    if (spin_) {
        // Waking a thread blocked on a condition variable takes tens of microseconds here, and
        // a training step passes several barriers; when every rank has its own core, poll a
        // little first. Bounded, then block as usual (the predicate below re-checks under the
        // lock, so polling only ever shortens the wait).
        lock.unlock();
        for (int i = 0; i < kSpinPolls; ++i) {
            if (completed_.load(std::memory_order_acquire) != generation ||
                aborted_flag_.load(std::memory_order_relaxed))
                break;
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        lock.lock();
    }
    // A generation that completed counts even when an abort came after it: then every rank has
    // arrived and leaves normally (the next call throws).
    all_arrived_.wait(lock, [&] {
        return generation_ != generation ||
               (abortable && aborted_flag_.load(std::memory_order_relaxed));
    });
    if (generation_ != generation)
        return;
    const bool mismatch = mismatch_;
    std::string reason = reason_;
    lock.unlock();
    if (mismatch)
        throw std::logic_error(reason);
    throw Aborted(reason);
}

// ---- ThreadComm ----

ThreadComm::ThreadComm(std::shared_ptr<ThreadGroup> group, int rank)
    : group_(std::move(group)), rank_(rank) {
    if (!group_)
        throw std::invalid_argument("ThreadComm needs a group");
    if (rank < 0 || rank >= group_->size_)
        throw std::invalid_argument("rank " + std::to_string(rank) + " is not in a group of " +
                                    std::to_string(group_->size_));
}

void ThreadComm::check_not_aborted() {
    if (group_->aborted())
        group_->throw_aborted();
}

void ThreadComm::abort(const std::string& reason) {
    group_->abort(reason);
}

void ThreadComm::barrier() {
    if (group_->size_ == 1) {
        check_not_aborted();
        return;
    }
    group_->wait_all(/*abortable=*/true, /*check_slots=*/false);
}

void ThreadComm::all_reduce(std::span<float> data, ReduceOp op) {
    ThreadGroup& g = *group_;
    const int n_ranks = g.size_;
    if (n_ranks == 1) {
        // Sum over one rank is the data; Average multiplies by 1.0f, which changes no bits.
        check_not_aborted();
        return;
    }
    g.slots_[static_cast<std::size_t>(rank_)] = {
        ThreadGroup::Kind::AllReduce, static_cast<int>(op), data.size(), 0, data.data(), nullptr};
    g.wait_all(/*abortable=*/true, /*check_slots=*/true);

    const Slice slice = slice_of(data.size(), n_ranks, rank_);
    const bool average = op == ReduceOp::Average;
    // Average = (sum in rank order) * (1.0f / N): the reciprocal is rounded once, to float,
    // and applied with one multiply, identically on every rank.
    const float scale = 1.0f / static_cast<float>(n_ranks);
    std::vector<ThreadGroup::Slot>& slots = g.slots_;

    if (n_ranks == 2) {
        float* a = slots[0].data + slice.begin;
        float* b = slots[1].data + slice.begin;
        const std::size_t n = slice.end - slice.begin;
        if (average)
            average_pair(a, b, scale, n);
        else
            sum_pair(a, b, n);
    } else {
        // Rank 0's buffer holds the partial sums: acc = x_0; acc += x_1; ...; then the result
        // is copied into ranks 1..N-1, one chunk at a time.
        for (std::size_t begin = slice.begin; begin < slice.end; begin += kChunkFloats) {
            const std::size_t len = std::min(kChunkFloats, slice.end - begin);
            float* acc = slots[0].data + begin;
            for (int r = 1; r < n_ranks; ++r) {
                const float* x = slots[static_cast<std::size_t>(r)].data + begin;
                if (average && r == n_ranks - 1)
                    add_scale_into(acc, x, scale, len);
                else
                    add_into(acc, x, len);
            }
            for (int r = 1; r < n_ranks; ++r)
                copy_floats(slots[static_cast<std::size_t>(r)].data + begin, acc, len);
        }
    }
    g.wait_all(/*abortable=*/false, /*check_slots=*/false);
}

void ThreadComm::broadcast(std::span<float> data, int root) {
    ThreadGroup& g = *group_;
    const int n_ranks = g.size_;
    if (n_ranks == 1) {
        check_not_aborted();
        if (root != 0)
            throw std::logic_error("broadcast from root " + std::to_string(root) +
                                   " in a group of 1 rank");
        return;
    }
    g.slots_[static_cast<std::size_t>(rank_)] = {
        ThreadGroup::Kind::Broadcast, root, data.size(), 0, data.data(), nullptr};
    g.wait_all(/*abortable=*/true, /*check_slots=*/true);
    if (root < 0 || root >= n_ranks) {
        // Every rank agrees on the root (checked above), so every rank throws here; the
        // closing barrier keeps them together as after any collective.
        g.wait_all(/*abortable=*/false, /*check_slots=*/false);
        throw std::logic_error("broadcast from root " + std::to_string(root) + " in a group of " +
                               std::to_string(n_ranks) + " ranks");
    }
    // Every rank copies its slice of root's buffer to the others, so the N - 1 copies run in
    // parallel instead of all on the root.
    const Slice slice = slice_of(data.size(), n_ranks, rank_);
    const float* src = g.slots_[static_cast<std::size_t>(root)].data + slice.begin;
    for (int r = 0; r < n_ranks; ++r)
        if (r != root)
            copy_floats(g.slots_[static_cast<std::size_t>(r)].data + slice.begin, src,
                        slice.end - slice.begin);
    g.wait_all(/*abortable=*/false, /*check_slots=*/false);
}

void ThreadComm::all_gather(std::span<const float> in, std::span<float> out) {
    ThreadGroup& g = *group_;
    const int n_ranks = g.size_;
    const std::size_t n = in.size();
    const bool sizes_ok = out.size() == n * static_cast<std::size_t>(n_ranks);
    if (n_ranks == 1) {
        check_not_aborted();
        if (!sizes_ok)
            throw std::logic_error("all_gather of " + std::to_string(n) + " floats into " +
                                   std::to_string(out.size()) + " (needs exactly " +
                                   std::to_string(n) + ")");
        copy_floats(out.data(), in.data(), n);
        return;
    }
    g.slots_[static_cast<std::size_t>(rank_)] = {
        ThreadGroup::Kind::AllGather, 0, n, out.size(), out.data(), in.data()};
    g.wait_all(/*abortable=*/true, /*check_slots=*/true);
    if (!sizes_ok) {
        // Every rank published the same sizes (checked above), so every rank throws here.
        g.wait_all(/*abortable=*/false, /*check_slots=*/false);
        throw std::logic_error("all_gather of " + std::to_string(n) + " floats into " +
                               std::to_string(out.size()) + " (needs size() * " +
                               std::to_string(n) + " = " +
                               std::to_string(n * static_cast<std::size_t>(n_ranks)) + ")");
    }
    const std::size_t offset = static_cast<std::size_t>(rank_) * n;
    for (int r = 0; r < n_ranks; ++r)
        copy_floats(g.slots_[static_cast<std::size_t>(r)].data + offset, in.data(), n);
    g.wait_all(/*abortable=*/false, /*check_slots=*/false);
}

std::vector<std::unique_ptr<ThreadComm>> make_thread_comms(int size) {
    std::shared_ptr<ThreadGroup> group = ThreadGroup::create(size);
    std::vector<std::unique_ptr<ThreadComm>> comms;
    comms.reserve(static_cast<std::size_t>(size));
    for (int r = 0; r < size; ++r)
        comms.push_back(group->communicator(r));
    return comms;
}

}  // namespace scalelab::comm
