#include "comm/rank_threads.h"

#include <cstddef>
#include <exception>
#include <vector>

#include "error.h"

namespace scalelab::comm {

void run_rank_threads(int ranks, const std::function<void(int rank)>& run_rank,
                      const std::function<void(int started, const std::string& reason)>& release,
                      const ThreadStarter& start_thread) {
    std::vector<std::thread> threads;
    threads.reserve(static_cast<std::size_t>(ranks));
    std::string failure;
    for (int rank = 0; rank < ranks; ++rank) {
        try {
            auto body = [&run_rank, rank] { run_rank(rank); };
            threads.push_back(start_thread ? start_thread(body) : std::thread(body));
        } catch (const std::exception& e) {  // std::system_error, or std::bad_alloc
            failure = "could not start the thread of device " + std::to_string(rank) + " of " +
                      std::to_string(ranks) + " (" + e.what() + ")";
            break;
        }
    }
    if (!failure.empty())
        release(int(threads.size()), failure);
    for (std::thread& thread : threads)
        thread.join();
    if (!failure.empty())
        throw Error(ErrorKind::SystemLimit,
                    failure +
                        ": the machine limits how many threads a program may run (ulimit "
                        "-u, a container's pids limit); ask for fewer devices, or stop "
                        "other programs");
}

}  // namespace scalelab::comm
