#pragma once

// What the engine can ask of GPUs, whichever backend drives them. The CUDA backend keeps its
// layers, optimisers and NCCL in a module (libscalelab_cuda.so) that is loaded the first time
// one of these functions is called, so that programs that never use a GPU never load cuBLAS,
// cuDNN and NCCL (hundreds of MB of libraries). Without a GPU backend in the build, or when the
// module cannot be loaded, each function throws Error(InvalidSpec) saying why.

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "comm/allreduce_benchmark.h"
#include "comm/communicator.h"

namespace scalelab {

struct GpuBackendOptions {
    int gpu = 0;                 // the CUDA device index
    bool tf32 = false;           // TF32 tensor-core math in convolutions and matrix products
    bool deterministic = false;  // only algorithms that give the same bits on every run
};

// The NCCL communicators of one data-parallel group of GPUs: one rank per GPU, in `gpus` order.
class GpuGroup {
  public:
    virtual ~GpuGroup() = default;
    // Every rank of the group, in every process.
    virtual int size() const = 0;
    // Local rank `rank`'s communicator (0 <= rank < this process's GPUs; its rank() is the
    // global one) over device memory (every span it is given is GPU memory of
    // that rank's GPU). Its collectives run on a communication stream of their own; each call
    // returns once the collective is complete (the Communicator contract). Use it on one thread.
    virtual std::unique_ptr<comm::Communicator> communicator(int rank) = 0;
    // Ends every rank's collectives (ncclCommAbort); waiting ranks throw comm::Aborted(reason).
    virtual void abort(const std::string& reason) = 0;
};

struct GpuGroupOptions {
    std::vector<int> gpus;  // CUDA device indices, each once
    // A collective that has not finished after this long aborts the group: a rank that never
    // arrives would otherwise hang every other one forever.
    double timeout_seconds = 300;
    // Across processes: this process's GPUs are global ranks first_rank ... first_rank +
    // gpus.size() - 1 of `ranks` in all, joined through `unique_id`, the bytes of one
    // make_gpu_group_id() that every process was given (rank 0's, as NCCL bootstraps). Empty
    // unique_id: the group is this process's GPUs alone (first_rank 0, ranks gpus.size()).
    std::string unique_id{};
    int first_rank = 0;
    int ranks = 0;
};

// A backend on GPU options.gpu; create, use and destroy it on one thread (see Backend).
std::unique_ptr<Backend> make_gpu_backend(const GpuBackendOptions& options);

// Communicators for the GPUs, made together (ncclCommInitAll; across processes, ncclCommInitRank
// for each GPU in one NCCL group, collective across the processes); the group's watchdog watches
// them for NCCL's asynchronous errors and for collectives past the timeout.
std::shared_ptr<GpuGroup> make_gpu_group(const GpuGroupOptions& options);

// A new id for a GPU group across processes (ncclGetUniqueId, as bytes): made by one process,
// sent to the others, and given to make_gpu_group by each (GpuGroupOptions::unique_id).
std::string make_gpu_group_id();

// run_allreduce_benchmark's measurement over GPUs with NCCL: the same rows, each iteration timed
// with CUDA events on every rank, the slowest rank's time kept.
std::vector<comm::AllReduceRow> run_gpu_allreduce_benchmark(
    const std::vector<int>& gpus, const std::vector<std::size_t>& sizes_bytes, int iterations);

}  // namespace scalelab
