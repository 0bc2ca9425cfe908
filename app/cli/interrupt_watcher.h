#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace scalelab::cli {

// Turns Ctrl-C (SIGINT) and SIGTERM (what kill, systemd and Slurm send) into a call of
// `on_interrupt(signal)` on an ordinary thread, so that both end a run as cancelled with
// everything recorded. The signal handler only writes the signal's number to a pipe
// (async-signal-safe); a watcher thread blocked on the pipe makes the call, so it may take locks
// or allocate. The handlers are installed with SA_RESETHAND: a second signal of the same kind
// ends the process at once, for a run that does not stop. One at a time.
class InterruptWatcher {
  public:
    explicit InterruptWatcher(std::function<void(int signal)> on_interrupt);
    ~InterruptWatcher();  // restores the previous handlers and stops the thread

    // The first signal received (SIGINT or SIGTERM), 0 while none was.
    int received() const { return received_.load(); }

    InterruptWatcher(const InterruptWatcher&) = delete;
    InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  private:
    std::function<void(int)> on_interrupt_;
    std::atomic<int> received_{0};
    std::thread watcher_;
};

}  // namespace scalelab::cli
