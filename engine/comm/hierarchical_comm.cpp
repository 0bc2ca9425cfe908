#include "comm/hierarchical_comm.h"

#include <chrono>
#include <stdexcept>
#include <utility>

namespace scalelab::comm {

HierarchicalComm::HierarchicalComm(std::unique_ptr<ThreadComm> local,
                                   std::shared_ptr<ProcessGroup> processes)
    : local_(std::move(local)), processes_(std::move(processes)) {
    if (!local_ || !processes_)
        throw std::invalid_argument(
            "a hierarchical communicator needs a local group and a "
            "process group");
}

int HierarchicalComm::rank() const {
    return processes_->index() * local_->size() + local_->rank();
}

int HierarchicalComm::size() const {
    return processes_->count() * local_->size();
}

template <typename Step>
void HierarchicalComm::across_processes(Step&& step) {
    if (local_->rank() != 0)
        return;
    const auto start = std::chrono::steady_clock::now();
    try {
        step();
    } catch (const std::exception& error) {
        local_->abort(error.what());
        throw;
    }
    between_processes_ns_.fetch_add(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        std::chrono::steady_clock::now() - start)
                                        .count());
}

double HierarchicalComm::seconds_between_processes() const {
    return double(between_processes_ns_.load()) * 1e-9;
}

void HierarchicalComm::all_reduce(std::span<float> data, ReduceOp op) {
    local_->all_reduce(data, ReduceOp::Sum);
    across_processes([&] { processes_->all_reduce_sum(data); });
    local_->broadcast(data, 0);
    if (op == ReduceOp::Average) {
        const float scale = 1.0F / float(size());
        for (float& value : data)
            value *= scale;
    }
}

void HierarchicalComm::broadcast(std::span<float> data, int root) {
    if (root < 0 || root >= size())
        throw std::logic_error("broadcast from rank " + std::to_string(root) + " of " +
                               std::to_string(size()));
    const int root_process = root / local_->size();
    // The root's process first has it in every local buffer, then in every process.
    if (process() == root_process)
        local_->broadcast(data, root % local_->size());
    across_processes([&] { processes_->broadcast(data, root_process); });
    local_->broadcast(data, 0);
}

void HierarchicalComm::all_gather(std::span<const float> in, std::span<float> out) {
    const std::size_t block = in.size() * std::size_t(local_->size());
    if (out.size() != block * std::size_t(processes_->count()))
        throw std::logic_error("all_gather: out must hold size() x in.size() floats");
    // This process's ranks are consecutive global ranks: their block is gathered in place.
    const std::span<float> own = out.subspan(block * std::size_t(process()), block);
    local_->all_gather(in, own);
    across_processes([&] { processes_->all_gather(own, out); });
    local_->broadcast(out, 0);
}

void HierarchicalComm::barrier() {
    local_->barrier();
    across_processes([&] { processes_->barrier(); });
    local_->barrier();
}

void HierarchicalComm::abort(const std::string& reason) {
    local_->abort(reason);
    processes_->abort(reason);
}

}  // namespace scalelab::comm
