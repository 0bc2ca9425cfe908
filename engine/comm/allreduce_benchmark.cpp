#include "comm/allreduce_benchmark.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>

#include "comm/allreduce_rows.h"
#include "comm/rank_threads.h"
#include "comm/thread_comm.h"
#include "error.h"

namespace scalelab::comm {

namespace {

// Seconds per timed iteration, [rank][iteration], for one size.
std::vector<std::vector<double>> time_ranks(int devices, std::size_t floats, int iterations) {
    std::vector<std::vector<double>> seconds(
        static_cast<std::size_t>(devices),
        std::vector<double>(static_cast<std::size_t>(iterations)));
    std::vector<std::unique_ptr<ThreadComm>> comms = make_thread_comms(devices);

    // Set by rank 0 before the barrier of the first timed iteration; read by every rank after
    // that barrier, so all ranks switch from warm-up to timing at the same iteration.
    std::atomic<bool> warm{false};
    const auto warmup_start = std::chrono::steady_clock::now();

    std::mutex failure_mutex;
    std::exception_ptr failure;
    const auto run_rank = [&](int rank) {
        ThreadComm& comm = *comms[static_cast<std::size_t>(rank)];
        try {
            // Allocated and first touched by the rank's own thread, and kept for every
            // iteration, as a trainer keeps its gradient buffer.
            std::vector<float> buffer(floats);
            int warmup_done = 0;
            for (int timed = 0; timed < iterations;) {
                std::fill(buffer.begin(), buffer.end(), 1.0f);
                if (rank == 0 && warmup_done >= allreduce_warmup_iterations &&
                    std::chrono::steady_clock::now() - warmup_start >=
                        std::chrono::duration<double>(allreduce_min_warmup_seconds))
                    warm.store(true, std::memory_order_relaxed);
                comm.barrier();
                const bool timing = warm.load(std::memory_order_relaxed);
                const auto start = std::chrono::steady_clock::now();
                comm.all_reduce(buffer, ReduceOp::Sum);
                const auto stop = std::chrono::steady_clock::now();
                if (timing)
                    seconds[static_cast<std::size_t>(rank)][static_cast<std::size_t>(timed++)] =
                        std::chrono::duration<double>(stop - start).count();
                else
                    ++warmup_done;
            }
        } catch (...) {
            {
                std::lock_guard lock(failure_mutex);
                if (!failure)
                    failure = std::current_exception();
            }
            // Releases the other ranks, which then throw Aborted (and record nothing).
            comm.abort("rank " + std::to_string(rank) + " of the all-reduce benchmark failed");
        }
    };

    run_rank_threads(devices, run_rank,
                     [&](int, const std::string& reason) { comms.front()->abort(reason); });

    if (failure) {
        try {
            std::rethrow_exception(failure);
        } catch (const std::bad_alloc&) {
            throw Error(ErrorKind::OutOfMemory,
                        "the all-reduce benchmark could not allocate " + std::to_string(devices) +
                            " buffers of " + std::to_string(floats * sizeof(float)) +
                            " bytes; ask for smaller --sizes or fewer --devices");
        }
    }
    return seconds;
}

}  // namespace

std::vector<AllReduceRow> run_allreduce_benchmark(int devices,
                                                  const std::vector<std::size_t>& sizes_bytes,
                                                  int iterations) {
    check_allreduce_arguments(devices, sizes_bytes, iterations);
    std::vector<AllReduceRow> rows;
    for (std::size_t requested : sizes_bytes) {
        const std::size_t floats = requested / sizeof(float);
        rows.push_back(allreduce_row(devices, floats * sizeof(float),
                                     time_ranks(devices, floats, iterations)));
    }
    return rows;
}

}  // namespace scalelab::comm
