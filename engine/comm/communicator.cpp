#include "comm/communicator.h"

#include <chrono>

namespace scalelab::comm {

double Communicator::all_reduce_after(Fence& ready, std::span<float> data, ReduceOp op) {
    ready.wait();
    const auto start = std::chrono::steady_clock::now();
    all_reduce(data, op);
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace scalelab::comm
