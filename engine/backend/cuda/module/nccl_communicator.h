#pragma once

#include <cuda_runtime_api.h>
#include <nccl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "backend/gpu_runtime.h"
#include "comm/communicator.h"

namespace scalelab::cuda {

class NcclCommunicator;

// Throws Error(InvalidSpec), saying what to change, unless `options` name at least one GPU, each
// once, every one a GPU of this machine, and a positive timeout; across processes, an id of
// ncclUniqueId's size and ranks inside the group. The list and the timeout are
// checked before CUDA is asked anything; without a usable GPU the message gives the reason
// (no_gpu_reason).
void check_nccl_group_options(const GpuGroupOptions& options);

// The NCCL communicators of this process's GPUs in one group (ncclCommInitAll; across processes,
// ncclCommInitRank per GPU, global rank = first_rank + local index), one rank per GPU, with
// what each local rank's collectives run on, and the watchdog that ends the group when NCCL
// fails or a collective never finishes. Modelled on PyTorch's ProcessGroupNCCL, reduced to one
// process with one thread per GPU.
//
// Threads and what each may do:
//  - rank threads: rank r's NcclCommunicator (one live communicator per rank, handed out by
//    communicator()) may be used by several threads in turn, never at once: the trainer's
//    worker thread, and its gradient reducer's thread while the worker runs backward. Each
//    collective makes rank r's GPU current on the calling thread and makes its NCCL call under
//    rank r's enqueue lock, so no two threads are inside NCCL on one communicator (NCCL's
//    rule); two collectives of one rank must not overlap (one in-flight mark, one done event);
//  - any thread: abort(reason), once or many times (only the first counts);
//  - the watchdog thread: polls every kWatchdogPeriod, and aborts the group itself.
//
// A collective of rank r:
//   1. under rank r's enqueue lock: check that the group is not aborted, mark the collective in
//      flight (for the watchdog), enqueue it on r's communication stream (for
//      start_all_reduce_after, behind a cudaStreamWaitEvent on the caller's fence) and record
//      r's done event after it (the watchdog's clock starts here; behind a fence, once the
//      collective starts on the GPU), and the caller's done fence where it gave one;
//   2. without any lock: wait for the done event (cudaEventSynchronize on an event made with
//      cudaEventBlockingSync: the thread sleeps, no core spins), then clear the in-flight mark
//      (for start_all_reduce_after, in finish_all_reduce: the mark stays between the two);
//   3. if the group was aborted meanwhile, throw comm::Aborted(first reason): the buffer holds
//      whatever the aborted kernels left.
//
// Abort: sets the flag and the reason (the first only), then takes every rank's enqueue lock so
// that no rank is inside an NCCL call (waiting at most kEnqueueGrace for a rank stuck on the host
// inside one), and calls ncclCommAbort on all communicators in one NCCL
// group (abort is an intra-node collective of NCCL's: called for one communicator after another
// from one thread, the first would wait for the others). NCCL then tells its kernels to quit, so
// every done event fires and every rank waiting in step 2 wakes and throws in step 3; a rank
// that enters a collective later throws in step 1. The communicators are gone from then on:
// nothing touches them again, and they are not destroyed a second time.
//
// Life cycle: the group lives while its creator's shared_ptr or any communicator does (each holds
// a shared_ptr). The destructor stops and joins the watchdog first (which may be finishing an
// abort), then destroys the communicators unless an abort already freed them (ncclCommDestroy,
// again in one NCCL group), then the streams, events and barrier buffers.
class NcclGroup final : public GpuGroup, public std::enable_shared_from_this<NcclGroup> {
  public:
    // Checks options (check_nccl_group_options), then creates the communicators (connected
    // at creation: see connect_at_init), the streams, events and barrier buffers, starts the
    // watchdog and runs one all-reduce on every rank, so that GPUs that cannot reach each other
    // fail here rather than in a rank's first collective. Throws scalelab::Error.
    static std::shared_ptr<NcclGroup> create(const GpuGroupOptions& options);

    ~NcclGroup() override;
    NcclGroup(const NcclGroup&) = delete;
    NcclGroup& operator=(const NcclGroup&) = delete;

    // Every rank of the group, this process's and the others'.
    int size() const override { return global_ranks_; }
    int local_ranks() const { return static_cast<int>(ranks_.size()); }
    int first_rank() const { return options_.first_rank; }
    std::unique_ptr<comm::Communicator> communicator(int rank) override;
    // The same, as the concrete type (the benchmark times its all-reduces).
    std::unique_ptr<NcclCommunicator> nccl_communicator(int rank);
    void abort(const std::string& reason) override;

    bool aborted() const { return aborted_.load(std::memory_order_acquire); }

    // For create() only (std::make_shared needs it public).
    struct Private {};
    NcclGroup(Private, const GpuGroupOptions& options);

  private:
    friend class NcclCommunicator;

    // What one rank's collectives run on, created on the rank's GPU by create().
    struct Rank {
        int gpu = 0;
        ncclComm_t comm = nullptr;
        cudaStream_t stream = nullptr;       // non-blocking: never waits for the legacy stream
        cudaEvent_t done = nullptr;          // blocking sync, no timing: the end of a collective
        cudaEvent_t timing_start = nullptr;  // blocking sync, timed: timed_all_reduce's bounds
        cudaEvent_t timing_stop = nullptr;
        float* barrier_value = nullptr;  // one float of device memory for barrier()

        // Held by the rank's thread while it is inside an NCCL call or records on the stream,
        // and by abort while it frees the communicators. Timed: see abort_communicators.
        std::timed_mutex enqueue_mutex;
        // When the collective in flight started (steady clock, ns since its epoch), 0 when
        // none; and which collective it is. Written by the rank's thread, read by the watchdog.
        std::atomic<std::int64_t> in_flight_since_ns{0};
        std::atomic<const char*> in_flight_name{""};
        // The collective in flight follows a fence (start_all_reduce_after): see
        // watchdog_problem.
        std::atomic<bool> in_flight_behind_fence{false};
        bool handed_out = false;  // a live NcclCommunicator has this rank (under state_mutex_)
    };

    // One collective of rank `rank`, as the class comment describes: start_collective is step
    // 1 and marks the collective in flight, finish_collective steps 2 and 3 and clears the mark;
    // run_collective does both. enqueue makes the NCCL call on the rank's communicator and
    // stream. With `after` (an event of the rank's GPU, or nullptr), the stream first waits for
    // it. With timed set, the collective is bracketed by the timing events, recorded after that
    // wait, and finish returns the milliseconds between them (0 otherwise). `done` (an event of
    // the rank's GPU, or nullptr) is recorded on the stream right behind the collective. `name`
    // is the collective ("all_reduce"), `call` the NCCL function, for messages. Each start is
    // followed by its finish (with the same timed) before the rank's next collective.
    using Enqueue = std::function<ncclResult_t(ncclComm_t, cudaStream_t)>;
    void start_collective(int rank, const char* name, const char* call, const Enqueue& enqueue,
                          cudaEvent_t after, bool timed, cudaEvent_t done);
    float finish_collective(int rank, const char* name, const char* call, bool timed);
    float run_collective(int rank, const char* name, const char* call, const Enqueue& enqueue,
                         cudaEvent_t after, bool timed);

    void create_rank_resources();
    void init_communicators();  // ranks_[r].comm for every local rank
    void connect_ranks();       // the creation-time all-reduce (see create)
    void release_rank_resources() noexcept;
    void abort_communicators() noexcept;
    void release_handout(int rank);  // a communicator of `rank` was destroyed

    [[noreturn]] void throw_aborted() const;
    // What went wrong, as an abort reason, or "" when nothing did: an asynchronous NCCL error,
    // or a collective in flight for longer than the timeout.
    std::string watchdog_problem();
    void watch();

    const GpuGroupOptions options_;
    const int global_ranks_;
    std::vector<Rank> ranks_;  // this process's, by local rank

    mutable std::mutex state_mutex_;  // reason_, handed_out
    std::string reason_;              // the first abort's reason
    std::atomic<bool> aborted_{false};

    // Held while the communicators are freed, and by the watchdog while it asks them for their
    // asynchronous errors, so that it never asks a freed one.
    std::mutex comms_mutex_;
    bool comms_released_ = false;

    std::mutex watchdog_mutex_;
    std::condition_variable watchdog_wake_;
    bool watchdog_stop_ = false;
    std::thread watchdog_;
};

// One rank of an NcclGroup, over device memory of that rank's GPU (the Communicator contract,
// with NCCL doing the work; see NcclGroup for waiting and abort). Use it from one thread at a
// time (any thread: each call makes the rank's GPU current on it). Its collectives run on a
// communication stream that does not wait for the backend's compute stream: the caller makes
// sure the data is written first (upload synchronises), except start_all_reduce_after, whose
// stream waits on the GPU for the fence's event (cudaStreamWaitEvent) before the all-reduce
// starts. That fence must be a GPU backend's, of this rank's GPU; its `done` fence one of
// make_fence(), an event on the communication stream, which a GPU backend's stream waits for on
// the GPU (Backend::wait_for). Between start_all_reduce_after and finish_all_reduce the rank
// makes no other collective (it throws std::logic_error): the watchdog times one collective per
// rank.
//
// all_reduce: ncclAllReduce in place, ncclSum or ncclAvg. NCCL's Average multiplies each rank's
// values by 1/N before summing (ncclAvg on floats is a pre-multiplied sum), so its last bits
// may differ from the CPU backend's sum * (1/N); every rank still gets the same bits.
// broadcast: ncclBroadcast in place from `root`.
// all_gather: ncclAllGather, rank r's `in` to out[r * n, (r + 1) * n) on every rank (in may be
// exactly that part of out: NCCL's in-place all-gather).
// barrier: an all-reduce of the rank's one-float barrier buffer.
// Empty buffers make no NCCL call (every rank passes the same sizes); like ThreadComm, a root
// outside the group or an all_gather output of the wrong size throws std::logic_error before
// anything is enqueued.
class NcclCommunicator final : public comm::Communicator {
  public:
    ~NcclCommunicator() override;
    NcclCommunicator(const NcclCommunicator&) = delete;
    NcclCommunicator& operator=(const NcclCommunicator&) = delete;

    int rank() const override { return group_->first_rank() + rank_; }
    int size() const override { return group_->size(); }

    void all_reduce(std::span<float> data, comm::ReduceOp op) override;
    void broadcast(std::span<float> data, int root) override;
    void all_gather(std::span<const float> in, std::span<float> out) override;
    void barrier() override;
    void abort(const std::string& reason) override;

    std::optional<double> start_all_reduce_after(Fence& ready, std::span<float> data,
                                                 comm::ReduceOp op, Fence* done) override;
    double finish_all_reduce() override;
    std::unique_ptr<Fence> make_fence() override;

    // all_reduce, timed on the GPU: the milliseconds between two events recorded on the
    // communication stream right before and right after the NCCL call (cudaEventElapsedTime).
    float timed_all_reduce(std::span<float> data, comm::ReduceOp op);

  private:
    friend class NcclGroup;  // hands out one communicator per rank
    NcclCommunicator(std::shared_ptr<NcclGroup> group, int rank);
    float reduce(std::span<float> data, comm::ReduceOp op, bool timed);
    static NcclGroup::Enqueue all_reduce_call(std::span<float> data, comm::ReduceOp op);
    void require_nothing_started() const;

    std::shared_ptr<NcclGroup> group_;
    int rank_;  // local: the index into the group's ranks_
    // start_all_reduce_after left an all-reduce in flight for finish_all_reduce.
    bool started_ = false;
};

}  // namespace scalelab::cuda
