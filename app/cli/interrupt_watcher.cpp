#include "cli/interrupt_watcher.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace scalelab::cli {

namespace {

constexpr char interrupted_byte = 'i';
constexpr char stop_byte = 's';

// The pipe the handler writes to; a signal handler can reach only globals.
int pipe_fds[2] = {-1, -1};
struct sigaction previous_action;

void on_sigint(int) {
    const int saved_errno = errno;
    [[maybe_unused]] const ssize_t written = write(pipe_fds[1], &interrupted_byte, 1);
    errno = saved_errno;
}

}  // namespace

InterruptWatcher::InterruptWatcher(std::function<void()> on_interrupt)
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
            on_interrupt_();
        }
    });
    struct sigaction action = {};
    action.sa_handler = on_sigint;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESETHAND | SA_RESTART;
    sigaction(SIGINT, &action, &previous_action);
}

InterruptWatcher::~InterruptWatcher() {
    sigaction(SIGINT, &previous_action, nullptr);
    [[maybe_unused]] const ssize_t written = write(pipe_fds[1], &stop_byte, 1);
    watcher_.join();
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    pipe_fds[0] = pipe_fds[1] = -1;
}

}  // namespace scalelab::cli
