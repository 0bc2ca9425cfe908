#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.h"

namespace scalelab::comm {

class ThreadComm;

// The shared state of `size` ranks that are threads of one process: where each rank's buffer
// is during a collective, and one blocking barrier. Create it once, then give each rank's
// thread its own ThreadComm (communicator(rank)); the group lives as long as the longest-lived
// of them (or its creator's shared_ptr).
//
// How a collective runs (all_reduce, broadcast, all_gather):
//   1. each rank publishes its buffer pointer and sizes in its slot;
//   2. opening barrier: the last rank to arrive checks that every rank called the same
//      collective with the same sizes (op, root); a mismatch makes every rank throw
//      std::logic_error, naming the ranks and sizes, and leaves the group aborted with that
//      message (later calls throw Aborted) - a mismatch is a bug in the caller;
//   3. each rank works on its own slice of the buffer, reading and writing every rank's buffer
//      (the slices are disjoint, so no two threads touch the same float);
//   4. closing barrier: no rank returns (and may free or reuse its buffer) while another may
//      still touch it.
// Waiting blocks on a mutex + condition variable; nothing spins, so devices may outnumber cores.
//
// abort(reason), from any thread: every rank waiting in an opening barrier or barrier() wakes
// and throws Aborted(reason of the first abort), and so does every later call. A closing
// barrier is not abortable: once the opening barrier has passed, every rank is only computing
// on the buffers and reaches the closing barrier within one slice's time, and leaving earlier
// would let a rank free a buffer that another rank is still writing. So abort takes effect
// within one collective's compute time.
class ThreadGroup : public std::enable_shared_from_this<ThreadGroup> {
  public:
    // 1 <= size; throws std::invalid_argument otherwise. spin: every rank has a core of its
    // own, so a rank that arrives early at a barrier may poll briefly (a few tens of
    // microseconds) before it blocks; never set it when ranks may outnumber cores.
    static std::shared_ptr<ThreadGroup> create(int size, bool spin = false);

    int size() const { return size_; }

    // Rank `rank`'s communicator, to be used by one thread at a time (normally the rank's own
    // worker thread); 0 <= rank < size, else std::invalid_argument. Each rank is handed out
    // once per collective sequence: two communicators of the same rank would collide.
    std::unique_ptr<ThreadComm> communicator(int rank);

    // The same as any rank's abort(); may be called from a thread that is no rank (a watchdog,
    // the trainer's controller).
    void abort(const std::string& reason);
    bool aborted() const { return aborted_flag_.load(std::memory_order_acquire); }

    ThreadGroup(int size, bool spin);  // use create(): communicator() needs a shared_ptr

  private:
    friend class ThreadComm;

    enum class Kind : std::uint8_t { AllReduce, Broadcast, AllGather };

    // What one rank published for the current collective. Written by its rank before the
    // opening barrier, read by every rank between the two barriers (the barrier's mutex orders
    // the accesses).
    struct Slot {
        Kind kind = Kind::AllReduce;
        int op_or_root = 0;         // ReduceOp for all_reduce, root for broadcast
        std::size_t count = 0;      // floats in `data` (all_gather: in `in`)
        std::size_t out_count = 0;  // all_gather: floats in `data` (the output)
        float* data = nullptr;
        const float* in = nullptr;  // all_gather's input
    };

    // Blocks until all ranks arrived. abortable: throws Aborted if the group is (or becomes)
    // aborted before every rank arrived. check_slots: the last rank to arrive validates the
    // slots (step 2 above) and fails the collective on a mismatch.
    void wait_all(bool abortable, bool check_slots);
    std::string slot_mismatch() const;  // "" when every slot agrees with rank 0's
    [[noreturn]] void throw_aborted();  // Aborted(reason_)

    const int size_;
    const bool spin_;
    std::vector<Slot> slots_;

    std::mutex mutex_;
    std::condition_variable all_arrived_;
    int arrived_ = 0;                          // ranks in the current barrier generation
    std::uint64_t generation_ = 0;             // completed barriers
    std::atomic<std::uint64_t> completed_{0};  // generation_, for polling without the mutex
    bool mismatch_ = false;                    // the group ended on a mismatched collective
    std::string reason_;                       // the first abort's reason (or the mismatch)
    std::atomic<bool> aborted_flag_{false};    // set once, after reason_, under mutex_
};

// One rank of a ThreadGroup. See ThreadGroup for how the collectives run and abort; here, what
// each computes.
//
// all_reduce: the buffer of n floats is split into size() slices of ceil(n / size() / 16) * 16
// floats (64-byte aligned offsets; the last slices may be shorter or empty). Rank r reduces
// slice r, in chunks that stay in L1/L2, as
//     sum = ((x_0 + x_1) + x_2) + ... + x_{N-1}      (float additions, in rank order)
//     Sum: result = sum;  Average: result = sum * (1.0f / N)   (one float multiply)
// and writes the result into every rank's buffer. The order and the formula do not depend on
// which rank computes a slice, on the vector width or on timing, so every rank gets the same
// bits, run after run.
// broadcast: rank r copies slice r of root's buffer into every other rank's buffer.
// all_gather: rank r copies its input into out[r * n, (r + 1) * n) of every rank (in place is
// allowed: `in` may be exactly that part of this rank's own `out`).
// Each rank's buffers must be its own (no two ranks may pass overlapping memory).
// With size() == 1 every collective is a no-op that only checks for abort (and, for broadcast
// and all_gather, the root and sizes).
class ThreadComm final : public Communicator {
  public:
    ThreadComm(std::shared_ptr<ThreadGroup> group, int rank);

    int rank() const override { return rank_; }
    int size() const override { return group_->size_; }

    void all_reduce(std::span<float> data, ReduceOp op) override;
    void broadcast(std::span<float> data, int root) override;
    void all_gather(std::span<const float> in, std::span<float> out) override;
    void barrier() override;
    void abort(const std::string& reason) override;

    const std::shared_ptr<ThreadGroup>& group() const { return group_; }

  private:
    void check_not_aborted();

    std::shared_ptr<ThreadGroup> group_;
    int rank_;
};

// size() communicators of one new group, rank i at index i.
std::vector<std::unique_ptr<ThreadComm>> make_thread_comms(int size);

// The [begin, end) floats of slice `rank` when n floats are split over `size` ranks as
// all_reduce and broadcast do (exposed for tests and benchmarks).
struct Slice {
    std::size_t begin = 0;
    std::size_t end = 0;
};
Slice slice_of(std::size_t n, int size, int rank);

}  // namespace scalelab::comm
