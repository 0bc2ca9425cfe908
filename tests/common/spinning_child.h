#pragma once

// A child process that burns a core, standing in for "another program" in tests of what other
// programs took from the machine (cpu_contention.h, the trainer's report of it).

#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>

namespace scalelab::testing {

// A child process that spins on a core until it is killed (or 30 s pass, or this process dies:
// it must never outlive the test). The destructor kills and reaps it whatever happened, also
// when a check failed and returned early.
class SpinningChild {
  public:
    SpinningChild() : pid_(fork()) {
        if (pid_ == 0) {
            // Only async-signal-safe calls here: the test process may have threads.
            prctl(PR_SET_PDEATHSIG, SIGKILL);
            const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(30);
            volatile unsigned long counter = 0;
            while (std::chrono::steady_clock::now() < end)
                counter = counter + 1;
            _exit(0);
        }
    }
    SpinningChild(const SpinningChild&) = delete;
    SpinningChild& operator=(const SpinningChild&) = delete;
    ~SpinningChild() {
        if (pid_ > 0)
            stop();
    }

    bool started() const { return pid_ > 0; }

    // Kills and reaps the child: the CPU time it spent, in seconds (-1 if it could not be reaped).
    double stop() {
        kill(pid_, SIGKILL);
        rusage usage{};
        pid_t reaped = -1;
        do {
            reaped = wait4(pid_, nullptr, 0, &usage);
        } while (reaped == -1 && errno == EINTR);
        pid_ = -1;
        if (reaped == -1)
            return -1;
        const auto seconds = [](const timeval& t) {
            return double(t.tv_sec) + double(t.tv_usec) * 1e-6;
        };
        return seconds(usage.ru_utime) + seconds(usage.ru_stime);
    }

  private:
    pid_t pid_;
};

}  // namespace scalelab::testing
