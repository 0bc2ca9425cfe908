#include "cli/interrupt_watcher.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace scalelab::cli {

namespace {

// The byte that stops the watcher; a signal is written as its number (SIGINT 2, SIGTERM 15).
constexpr char stop_byte = 0;
constexpr int watched_signals[] = {SIGINT, SIGTERM};

// The pipe the handler writes to; a signal handler can reach only globals.
int pipe_fds[2] = {-1, -1};
struct sigaction previous_actions[2];

void on_signal(int signal) {
    const int saved_errno = errno;
    const char byte = char(signal);
    [[maybe_unused]] const ssize_t written = write(pipe_fds[1], &byte, 1);
    errno = saved_errno;
}

}  // namespace

InterruptWatcher::InterruptWatcher(std::function<void(int)> on_interrupt)
    : on_interrupt_(std::move(on_interrupt)) {
    if (pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw std::runtime_error(std::string("cannot create the interrupt pipe: ") +
                                 std::strerror(errno));
    watcher_ = std::thread([this] {
        char byte = 0;
        while (true) {
            const ssize_t n = read(pipe_fds[0], &byte, 1);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0 || byte == stop_byte)
                return;
            int none = 0;
            received_.compare_exchange_strong(none, int(byte));
            on_interrupt_(int(byte));
        }
    });
    struct sigaction action = {};
    action.sa_handler = on_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    for (int i = 0; i < 2; ++i)
        sigaction(watched_signals[i], &action, &previous_actions[i]);
}

InterruptWatcher::~InterruptWatcher() {
    for (int i = 0; i < 2; ++i)
        sigaction(watched_signals[i], &previous_actions[i], nullptr);
    [[maybe_unused]] const ssize_t written = write(pipe_fds[1], &stop_byte, 1);
    watcher_.join();
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
}

}  // namespace scalelab::cli
