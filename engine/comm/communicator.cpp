#include "comm/communicator.h"

#include <chrono>
#include <stdexcept>

namespace scalelab::comm {

std::optional<double> Communicator::start_all_reduce_after(Fence& ready, std::span<float> data,
                                                           ReduceOp op, Fence* done) {
    ready.wait();
    const auto start = std::chrono::steady_clock::now();
    all_reduce(data, op);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done != nullptr)
        done->mark();
    return seconds;
}

double Communicator::finish_all_reduce() {
    throw std::logic_error(
        "finish_all_reduce without an all-reduce left running by "
        "start_all_reduce_after");
}

double Communicator::all_reduce_after(Fence& ready, std::span<float> data, ReduceOp op) {
    const std::optional<double> seconds = start_all_reduce_after(ready, data, op, nullptr);
    return seconds ? *seconds : finish_all_reduce();
}

std::unique_ptr<Fence> Communicator::make_fence() {
    return std::make_unique<DoneFence>();
}

}  // namespace scalelab::comm
