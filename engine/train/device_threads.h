#pragma once

#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "train/device_group.h"
#include "train/run_spec.h"

namespace scalelab {

// What a device's failure says: the exception's message and, when memory ran out, the batch
// that did not fit and a smaller one to try.
std::string failure_message(const std::exception& failure, const RunSpec& spec);

// The device threads of one data-parallel group (the trainer's, the throughput benchmark's),
// and how they ended. Invariants, enforced in run():
//  - a device's work that throws aborts every group of `group` before its thread ends: another
//    device may wait for it in any of them, and would otherwise wait forever;
//  - the first failure and the first abort that released a device are kept, and only those:
//    the rest are consequences (a device released by the abort another one's failure made).
class DeviceThreads {
  public:
    DeviceThreads(DeviceGroup& group, const RunSpec& spec) : group_(group), spec_(spec) {}

    // Runs work(rank) for every device, each on a thread of its own (comm::run_rank_threads),
    // and returns once all have ended. Throws Error(SystemLimit) when a thread cannot start.
    void run(int devices, const std::function<void(int rank)>& work);

    // The first device whose work threw something other than comm::Aborted.
    struct Failure {
        int rank = 0;
        std::exception_ptr error;
        std::string message;  // failure_message's

        // Throws `error` as the user should see it: out of memory as an Error of that kind with
        // `message` (the batch to try), anything else as it was thrown.
        [[noreturn]] void rethrow() const;
    };
    const std::optional<Failure>& failure() const { return failure_; }
    // Why the first device released by an abort was released (comm::Aborted's message).
    const std::optional<std::string>& abort_reason() const { return abort_reason_; }

  private:
    DeviceGroup& group_;
    const RunSpec& spec_;
    std::mutex mutex_;  // guards failure_ and abort_reason_ while the threads run
    std::optional<Failure> failure_;
    std::optional<std::string> abort_reason_;
};

}  // namespace scalelab
