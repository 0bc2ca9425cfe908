#include "backend/cuda/module/nccl_allreduce_benchmark.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <string>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/module/nccl_communicator.h"
#include "comm/allreduce_rows.h"
#include "comm/rank_threads.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

// Which iterations are timed: the CPU benchmark's rule (allreduce_benchmark.h). For each size,
// untimed warm-up iterations until at least allreduce_warmup_iterations of them and
// allreduce_min_warmup_seconds have passed, then `iterations` timed ones; then the next size
// warms up again. decide() runs once per iteration, in the completion step of the barrier all
// ranks pass before it (on one thread, while the others wait), so every rank reads the same
// answer and all switch from warm-up to timing at the same iteration.
class IterationSchedule {
  public:
    explicit IterationSchedule(int iterations) : iterations_(iterations) {}

    void decide() noexcept {
        const auto now = std::chrono::steady_clock::now();
        if (!started_ || timed_ == iterations_) {  // the first iteration of a size
            started_ = true;
            timed_ = 0;
            warmup_done_ = 0;
            warmup_start_ = now;
        }
        timing_ = warmup_done_ >= comm::allreduce_warmup_iterations &&
                  now - warmup_start_ >=
                      std::chrono::duration<double>(comm::allreduce_min_warmup_seconds);
        if (timing_)
            ++timed_;
        else
            ++warmup_done_;
    }

    bool timing() const { return timing_; }

  private:
    const int iterations_;
    bool started_ = false;
    int timed_ = 0;
    int warmup_done_ = 0;
    std::chrono::steady_clock::time_point warmup_start_;
    bool timing_ = false;
};

struct DeviceFree {
    void operator()(float* p) const { cudaFree(p); }
};
using DeviceFloats = std::unique_ptr<float, DeviceFree>;

// `floats` floats of GPU memory on the current GPU, zero: filled once, never refilled. The
// repeated sums stay zero, and the GPU's float arithmetic takes the same time whatever the
// values (the CPU benchmark refills with 1.0f to touch the memory from the right thread; GPU
// memory needs no such thing).
DeviceFloats allocate_zeros(std::size_t floats, int gpu) {
    void* p = nullptr;
    const std::size_t bytes = floats * sizeof(float);
    if (const cudaError_t status = cudaMalloc(&p, bytes); status != cudaSuccess) {
        cudaGetLastError();
        if (status == cudaErrorMemoryAllocation)
            throw Error(ErrorKind::OutOfMemory,
                        "the all-reduce benchmark could not allocate " + std::to_string(bytes) +
                            " bytes on GPU " + std::to_string(gpu) + "; ask for smaller --sizes");
        throw cuda_error(status, "cudaMalloc");
    }
    DeviceFloats buffer(static_cast<float*>(p));
    check_cuda(cudaMemset(p, 0, bytes), "cudaMemset");
    check_cuda(cudaDeviceSynchronize(), "cudaMemset");  // done before the first all-reduce
    return buffer;
}

}  // namespace

std::vector<comm::AllReduceRow> run_nccl_allreduce_benchmark(
    const std::vector<int>& gpus, const std::vector<std::size_t>& sizes_bytes, int iterations) {
    const int devices = static_cast<int>(gpus.size());
    comm::check_allreduce_arguments(devices, sizes_bytes, iterations);
    const std::shared_ptr<NcclGroup> group = NcclGroup::create({.gpus = gpus});

    std::size_t max_floats = 0;
    for (std::size_t bytes : sizes_bytes)
        max_floats = std::max(max_floats, bytes / sizeof(float));
    // seconds[size][rank][timed iteration]
    std::vector<std::vector<std::vector<double>>> seconds(
        sizes_bytes.size(), std::vector<std::vector<double>>(
                                static_cast<std::size_t>(devices),
                                std::vector<double>(static_cast<std::size_t>(iterations))));

    IterationSchedule schedule(iterations);
    std::barrier iteration_start(devices, [&schedule]() noexcept { schedule.decide(); });

    std::mutex failure_mutex;
    std::exception_ptr failure;
    const auto run_rank = [&](int rank) {
        try {
            const std::unique_ptr<NcclCommunicator> comm = group->nccl_communicator(rank);
            const int gpu = gpus[static_cast<std::size_t>(rank)];
            check_cuda(cudaSetDevice(gpu), "cudaSetDevice");
            // The largest size's buffer, used for every size: allocated and filled once, as a
            // trainer keeps its gradient buffer.
            const DeviceFloats buffer = allocate_zeros(max_floats, gpu);
            for (std::size_t s = 0; s < sizes_bytes.size(); ++s) {
                const std::span<float> data(buffer.get(), sizes_bytes[s] / sizeof(float));
                std::vector<double>& rank_seconds = seconds[s][static_cast<std::size_t>(rank)];
                for (int timed = 0; timed < iterations;) {
                    iteration_start.arrive_and_wait();
                    const bool timing = schedule.timing();
                    const float ms = comm->timed_all_reduce(data, comm::ReduceOp::Sum);
                    if (timing)
                        rank_seconds[static_cast<std::size_t>(timed++)] = ms * 1e-3;
                }
            }
        } catch (...) {
            {
                std::lock_guard lock(failure_mutex);
                if (!failure)
                    failure = std::current_exception();
            }
            // Wakes the other ranks (they throw Aborted and end up here too), and stops
            // waiting for this one at the iteration barrier.
            group->abort("rank " + std::to_string(rank) + " of the all-reduce benchmark failed");
            iteration_start.arrive_and_drop();
        }
    };

    // The ranks that never started will never arrive at the iteration barrier either.
    comm::run_rank_threads(devices, run_rank, [&](int started, const std::string& reason) {
        group->abort(reason);
        for (int missing = started; missing < devices; ++missing)
            iteration_start.arrive_and_drop();
    });

    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const Error&) {
            throw;
        } catch (const comm::Aborted& aborted) {
            // The watchdog ended the group (NCCL failed, or an all-reduce never finished).
            throw Error(ErrorKind::Internal,
                        std::string("the all-reduce benchmark stopped: ") + aborted.what());
        } catch (const std::exception& other) {
            throw Error(ErrorKind::Internal,
                        std::string("the all-reduce benchmark failed: ") + other.what());
        }
    }

    std::vector<comm::AllReduceRow> rows;
    for (std::size_t s = 0; s < sizes_bytes.size(); ++s)
        rows.push_back(comm::allreduce_row(devices, sizes_bytes[s] / sizeof(float) * sizeof(float),
                                           seconds[s]));
    return rows;
}

}  // namespace scalelab::cuda
