#include "comm/allreduce_benchmark.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <thread>

#include "comm/thread_comm.h"
#include "error.h"

namespace scalelab::comm {

namespace {

void check_arguments(int devices, const std::vector<std::size_t>& sizes_bytes, int iterations) {
    if (devices < 1 || devices > allreduce_max_devices)
        throw Error(ErrorKind::InvalidSpec, "the all-reduce benchmark runs on 1 to " +
                                                std::to_string(allreduce_max_devices) +
                                                " devices (got " + std::to_string(devices) + ")");
    if (iterations < 1)
        throw Error(ErrorKind::InvalidSpec,
                    "the all-reduce benchmark needs at least 1 timed "
                    "iteration (got " +
                        std::to_string(iterations) + ")");
    for (std::size_t bytes : sizes_bytes)
        if (bytes < sizeof(float))
            throw Error(ErrorKind::InvalidSpec,
                        "an all-reduce size must be at least " + std::to_string(sizeof(float)) +
                            " bytes, one float (got " + std::to_string(bytes) + ")");
}

double median(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

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

    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(devices));
    for (int rank = 0; rank < devices; ++rank)
        threads.emplace_back(run_rank, rank);
    for (std::thread& thread : threads)
        thread.join();

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
    check_arguments(devices, sizes_bytes, iterations);
    std::vector<AllReduceRow> rows;
    for (std::size_t requested : sizes_bytes) {
        const std::size_t floats = requested / sizeof(float);
        const std::vector<std::vector<double>> seconds = time_ranks(devices, floats, iterations);
        // An iteration lasts until its slowest rank is done.
        std::vector<double> slowest(static_cast<std::size_t>(iterations), 0.0);
        for (const std::vector<double>& rank_seconds : seconds)
            for (std::size_t it = 0; it < slowest.size(); ++it)
                slowest[it] = std::max(slowest[it], rank_seconds[it]);
        const double time_s = median(slowest);

        AllReduceRow row;
        row.devices = devices;
        row.bytes = floats * sizeof(float);
        row.time_ms = time_s * 1e3;
        row.algbw_GBs = time_s > 0 ? static_cast<double>(row.bytes) / time_s / 1e9 : 0.0;
        row.busbw_GBs = row.algbw_GBs * 2.0 * (devices - 1) / devices;
        rows.push_back(row);
    }
    return rows;
}

}  // namespace scalelab::comm
