#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "comm/communicator.h"
#include "comm/process_group.h"
#include "comm/thread_comm.h"

namespace scalelab::comm {

// The collectives of P processes x D local devices as one group of P*D ranks: global rank =
// process * D + local rank. Each collective runs in three steps, so that the processes
// exchange one buffer each, not D:
//   1. inside the process, over the D local ranks (shared memory, ThreadComm);
//   2. across processes, by local rank 0 alone (ProcessGroup: MPI);
//   3. inside the process again, local rank 0's result to the others.
// The invariants:
//  - only local rank 0's thread calls the ProcessGroup, so the processes see one caller each,
//    in the order of the collectives (ProcessGroup's one-thread-at-a-time contract);
//  - every rank's result is the same bits: the sum of each process's local sum, taken in
//    process order, then (Average) one multiply by 1 / (P*D) on every rank alike. For a given
//    layout the result is deterministic; against one process of P*D ranks the additions are
//    grouped differently ((a + b) + (c + d) instead of a + b + c + d), so the two layouts agree
//    to float rounding, not bit for bit;
//  - a failure of step 2 (an error, another process that never joins) aborts the local group
//    with its message, so that the local ranks waiting in step 3 throw Aborted too.
class HierarchicalComm final : public Communicator {
  public:
    HierarchicalComm(std::unique_ptr<ThreadComm> local, std::shared_ptr<ProcessGroup> processes);

    int rank() const override;
    int size() const override;
    int local_rank() const { return local_->rank(); }
    int process() const { return processes_->index(); }

    void all_reduce(std::span<float> data, ReduceOp op) override;
    void broadcast(std::span<float> data, int root) override;
    void all_gather(std::span<const float> in, std::span<float> out) override;
    void barrier() override;
    // Aborts this process's local group and its part of the process group (a collective
    // waiting across processes throws at once); the other processes learn of it when their next
    // collective times out or fails.
    void abort(const std::string& reason) override;
    double seconds_between_processes() const override;

  private:
    // Runs `step` on local rank 0 (the others skip it); a throw aborts the local group first.
    template <typename Step>
    void across_processes(Step&& step);

    std::unique_ptr<ThreadComm> local_;
    std::shared_ptr<ProcessGroup> processes_;
    // Step 2's time so far; written by whichever thread makes the collective (the gradient
    // reducer's or the worker's), read by the worker.
    std::atomic<std::int64_t> between_processes_ns_{0};
};

}  // namespace scalelab::comm
