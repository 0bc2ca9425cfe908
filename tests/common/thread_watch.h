#pragma once

// What the fault-injection tests check around every run they disturb: that it ends at all (a
// watchdog turns a hang into a failure that says so), and that it leaves no thread behind (the
// process's thread count goes back to what it was).

#include <QtGlobal>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <iterator>
#include <mutex>
#include <thread>

namespace scalelab::testing {

// The threads of this process, as Linux lists them.
inline int thread_count() {
    const std::filesystem::directory_iterator tasks("/proc/self/task");
    return int(std::distance(std::filesystem::begin(tasks), std::filesystem::end(tasks)));
}

// Waits up to `limit` for the thread count to come down to `expected`: a thread that was joined
// is gone at once, but OpenMP's pool threads leave a moment after the thread that owned them.
// Returns the last count seen.
inline int settled_thread_count(int expected,
                                std::chrono::milliseconds limit = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    int count = thread_count();
    while (count > expected && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        count = thread_count();
    }
    return count;
}

// Ends the process with a message when it is still alive after `limit`: a test whose run hangs
// fails in seconds, saying what hung, instead of waiting for the test driver's timeout.
class Watchdog {
  public:
    Watchdog(const char* what, std::chrono::seconds limit)
        : thread_([this, what, limit] {
              std::unique_lock lock(mutex_);
              if (!disarmed_.wait_for(lock, limit, [this] { return done_; }))
                  qFatal("%s did not end within %d s: a thread hangs", what, int(limit.count()));
          }) {}
    ~Watchdog() {
        {
            std::lock_guard lock(mutex_);
            done_ = true;
        }
        disarmed_.notify_one();
        thread_.join();
    }
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

  private:
    std::mutex mutex_;
    std::condition_variable disarmed_;
    bool done_ = false;
    std::thread thread_;  // last: starts once the members it uses exist
};

}  // namespace scalelab::testing
