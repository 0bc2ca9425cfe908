#include "train/device_threads.h"

#include "comm/communicator.h"
#include "comm/rank_threads.h"
#include "error.h"

namespace scalelab {

std::string failure_message(const std::exception& failure, const RunSpec& spec) {
    const auto* error = dynamic_cast<const Error*>(&failure);
    if (error == nullptr || error->kind() != ErrorKind::OutOfMemory)
        return failure.what();
    const std::string device = spec.device == DeviceKind::Gpu ? "GPU" : "device";
    if (spec.batch == 1)
        return std::string(failure.what()) + " (the model does not fit on a " + device +
               " even at batch 1: use a smaller model or width)";
    return std::string(failure.what()) + " (a batch of " + std::to_string(spec.batch) +
           " images per " + device + " does not fit: try batch " + std::to_string(spec.batch / 2) +
           ")";
}

void DeviceThreads::run(int devices, const std::function<void(int rank)>& work) {
    const auto run_rank = [&](int rank) {
        try {
            work(rank);
        } catch (const comm::Aborted& e) {
            // Released because another device failed, the run was cancelled, or someone else
            // (a watchdog) aborted one of the groups: then the others too.
            {
                std::lock_guard lock(mutex_);
                if (!abort_reason_)
                    abort_reason_ = e.what();
            }
            group_.abort(e.what());
        } catch (const std::exception& e) {
            const std::string message = failure_message(e, spec_);
            {
                std::lock_guard lock(mutex_);
                if (!failure_)
                    failure_ = Failure{rank, std::current_exception(), message};
            }
            group_.abort("device " + std::to_string(rank) + " failed: " + message);
        }
    };
    comm::run_rank_threads(devices, run_rank,
                           [&](int, const std::string& reason) { group_.abort(reason); });
}

void DeviceThreads::Failure::rethrow() const {
    try {
        std::rethrow_exception(error);
    } catch (const Error& e) {
        if (e.kind() == ErrorKind::OutOfMemory)
            throw Error(e.kind(), message);
        throw;
    }
}

}  // namespace scalelab
