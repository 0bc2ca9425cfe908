#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/gpu_runtime.h"
#include "comm/communicator.h"
#include "comm/process_group.h"
#include "comm/thread_comm.h"

namespace scalelab {

// The devices of one data-parallel run and how they talk, made before the worker threads
// start:
//  - CPU devices: one ThreadGroup carries everything (their memory is the host's);
//  - GPUs: NCCL (make_gpu_group) for what lives in GPU memory (parameters, gradients,
//    buffers), and a ThreadGroup for the host's numbers (a step's totals and times);
//  - with synchronised batch norm, a second ThreadGroup: its collectives run on the worker
//    threads while the gradient reducer's thread uses the first (a communicator serves one
//    thread at a time).
// Every rank's worker thread takes its part with rank(); abort() releases every group, so that a
// rank waiting in any of them learns that the run is over.
//
// Across processes (a ProcessGroup of more than one, CPU devices): the host's and synchronised
// batch norm's collectives are HierarchicalComm's over P processes x `devices` local ranks, each
// group on its own duplicate of the processes (their threads call at the same time); global
// rank = process * devices + local rank. GPUs across processes are one NCCL group of every
// process's GPUs (process 0's make_gpu_group_id sent to the others, then ncclCommInitRank for
// each local GPU); the host's numbers still go through HierarchicalComm.
class DeviceGroup {
  public:
    // gpus: one CUDA index per device, or empty for `devices` CPU devices of `threads` threads
    // each; gpu_options: the GPU backends' math (its `gpu` is set per rank); timeout_seconds:
    // the GPU group's collective timeout (GpuGroupOptions). spin: CPU barriers may poll briefly
    // (every thread has a core of its own).
    DeviceGroup(int devices, std::vector<int> gpus, GpuBackendOptions gpu_options,
                double timeout_seconds, int threads, bool sync_bn, bool spin,
                std::shared_ptr<comm::ProcessGroup> processes = nullptr);

    // What one rank's worker uses; take it on that rank's thread (a backend belongs to the
    // thread that made it), once.
    struct Rank {
        std::unique_ptr<Backend> backend;
        std::unique_ptr<comm::Communicator> host;
        std::unique_ptr<comm::Communicator> gpu;      // null for CPU devices
        std::unique_ptr<comm::Communicator> sync_bn;  // null without synchronised batch norm
        // Where the backend's memory is all-reduced: NCCL's for GPUs, the host's otherwise.
        comm::Communicator& comm() const { return gpu ? *gpu : *host; }
    };
    // `rank` is the local rank, 0 <= rank < devices.
    Rank rank(int rank);

    void abort(const std::string& reason);

  private:
    int threads_;
    std::vector<int> gpus_;
    GpuBackendOptions gpu_options_;
    std::shared_ptr<comm::ThreadGroup> host_;
    std::shared_ptr<comm::ThreadGroup> sync_bn_;
    // Across processes: the host's and sync BN's channels between them; null when alone.
    std::shared_ptr<comm::ProcessGroup> host_processes_;
    std::shared_ptr<comm::ProcessGroup> sync_bn_processes_;
    std::shared_ptr<GpuGroup> gpu_;
};

}  // namespace scalelab
