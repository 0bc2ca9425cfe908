#pragma once

#include <functional>
#include <string>
#include <thread>

namespace scalelab::comm {

// Starts a thread that runs `body`: std::thread's constructor, unless a test says otherwise.
using ThreadStarter = std::function<std::thread(std::function<void()> body)>;

// Runs run_rank(rank) for every rank in [0, ranks), each on a thread of its own, and returns
// once all have ended. run_rank must not throw: each caller records its rank's error and
// releases the other ranks itself.
//
// Starting a thread can fail (std::system_error: the process's or the container's limit on
// threads; std::bad_alloc). The ranks already running would then wait forever at their first
// collective for a rank that never comes, and a std::thread destroyed unjoined ends the process. So
// the ranks started are released with release(started, reason), which must make every collective
// they are in or will enter return (abort the group, drop the missing ranks from a barrier), then
// joined, and an Error (ErrorKind::SystemLimit) that says what to change is thrown.
void run_rank_threads(int ranks, const std::function<void(int rank)>& run_rank,
                      const std::function<void(int started, const std::string& reason)>& release,
                      const ThreadStarter& start_thread = {});

}  // namespace scalelab::comm
