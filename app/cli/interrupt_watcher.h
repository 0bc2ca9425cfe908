#pragma once

#include <functional>
#include <thread>

namespace scalelab::cli {

// Turns Ctrl-C (SIGINT) into a call of `on_interrupt` on an ordinary thread. The signal handler
// only writes one byte to a pipe (async-signal-safe); a watcher thread blocked on the pipe makes
// the call, so it may take locks or allocate. The handler is installed with SA_RESETHAND: a
// second Ctrl-C ends the process at once, for a run that does not stop. One at a time.
class InterruptWatcher {
  public:
    explicit InterruptWatcher(std::function<void()> on_interrupt);
    ~InterruptWatcher();  // restores the previous handler and stops the thread

    InterruptWatcher(const InterruptWatcher&) = delete;
    InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  private:
    std::function<void()> on_interrupt_;
    std::thread watcher_;
};

}  // namespace scalelab::cli
