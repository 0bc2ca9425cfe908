#include "comm/allreduce_benchmark.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <span>
#include <string>

#include "comm/allreduce_rows.h"
#include "comm/hierarchical_comm.h"
#include "comm/rank_threads.h"
#include "comm/thread_comm.h"
#include "error.h"

namespace scalelab::comm {

namespace {

// This process's ranks' communicators: threads of one ThreadGroup, each wrapped in a
// HierarchicalComm when `processes` spans more than this process.
std::vector<std::unique_ptr<Communicator>> bench_comms(
    int devices, const std::shared_ptr<ProcessGroup>& processes) {
    std::vector<std::unique_ptr<Communicator>> comms;
    for (std::unique_ptr<ThreadComm>& local : make_thread_comms(devices)) {
        if (processes && processes->count() > 1)
            comms.push_back(std::make_unique<HierarchicalComm>(std::move(local), processes));
        else
            comms.push_back(std::move(local));
    }
    return comms;
}

// Seconds per timed iteration, [global rank][iteration], for one size: every rank's times,
// gathered into every process.
std::vector<std::vector<double>> time_ranks(int devices, std::size_t floats, int iterations,
                                            const std::shared_ptr<ProcessGroup>& processes) {
    std::vector<std::unique_ptr<Communicator>> comms = bench_comms(devices, processes);
    const int ranks = comms.front()->size();
    std::vector<std::vector<double>> seconds(
        static_cast<std::size_t>(ranks), std::vector<double>(static_cast<std::size_t>(iterations)));
    const auto warmup_start = std::chrono::steady_clock::now();

    std::mutex failure_mutex;
    std::exception_ptr failure;
    const auto run_rank = [&](int local) {
        Communicator& comm = *comms[static_cast<std::size_t>(local)];
        try {
            // Allocated and first touched by the rank's own thread, and kept for every
            // iteration, as a trainer keeps its gradient buffer.
            std::vector<float> buffer(floats);
            std::vector<float> mine(static_cast<std::size_t>(iterations));
            int warmup_done = 0;
            for (int timed = 0; timed < iterations;) {
                std::fill(buffer.begin(), buffer.end(), 1.0f);
                // Global rank 0 decides when warm-up is over; the broadcast both tells every
                // rank of every process and lines them up before the timed all-reduce.
                float warm = comm.rank() == 0 && warmup_done >= allreduce_warmup_iterations &&
                                     std::chrono::steady_clock::now() - warmup_start >=
                                         std::chrono::duration<double>(allreduce_min_warmup_seconds)
                                 ? 1.0f
                                 : 0.0f;
                comm.broadcast(std::span<float>(&warm, 1), 0);
                const auto start = std::chrono::steady_clock::now();
                comm.all_reduce(buffer, ReduceOp::Sum);
                const auto stop = std::chrono::steady_clock::now();
                if (warm == 1.0f)
                    mine[static_cast<std::size_t>(timed++)] =
                        float(std::chrono::duration<double>(stop - start).count());
                else
                    ++warmup_done;
            }
            std::vector<float> all(mine.size() * static_cast<std::size_t>(ranks));
            comm.all_gather(mine, all);
            if (local == 0)
                for (std::size_t r = 0; r < seconds.size(); ++r)
                    for (std::size_t it = 0; it < mine.size(); ++it)
                        seconds[r][it] = all[r * mine.size() + it];
        } catch (...) {
            {
                std::lock_guard lock(failure_mutex);
                if (!failure)
                    failure = std::current_exception();
            }
            // Releases the other ranks, which then throw Aborted (and record nothing).
            comm.abort("rank " + std::to_string(comm.rank()) +
                       " of the all-reduce benchmark failed");
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
                                                  int iterations,
                                                  std::shared_ptr<ProcessGroup> processes) {
    check_allreduce_arguments(devices, sizes_bytes, iterations);
    const int ranks = devices * (processes ? processes->count() : 1);
    std::vector<AllReduceRow> rows;
    for (std::size_t requested : sizes_bytes) {
        const std::size_t floats = requested / sizeof(float);
        rows.push_back(allreduce_row(ranks, floats * sizeof(float),
                                     time_ranks(devices, floats, iterations, processes)));
    }
    return rows;
}

}  // namespace scalelab::comm
