#pragma once

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "comm/process_group.h"
#include "comm/thread_comm.h"

namespace scalelab::testing {

// Process `index` of a group whose collectives are a ThreadComm's: what MPI does between
// processes, done between threads, so that tests of what runs across processes need no MPI
// launcher. `fail_all_reduce` makes its all-reduces throw, as a transport error would, after
// aborting the group (as MPI's timeout would show the others).
class ThreadProcesses final : public comm::ProcessGroup {
  public:
    ThreadProcesses(std::unique_ptr<comm::ThreadComm> comm, bool fail_all_reduce = false)
        : comm_(std::move(comm)), fail_(fail_all_reduce) {}

    int index() const override { return comm_->rank(); }
    int count() const override { return comm_->size(); }
    std::string host() const override { return "host" + std::to_string(index()); }
    void all_reduce_sum(std::span<float> data) override {
        if (fail_) {
            const std::string message = "process " + std::to_string(index()) + ": link down";
            comm_->abort(message);
            throw std::runtime_error(message);
        }
        comm_->all_reduce(data, comm::ReduceOp::Sum);
    }
    void broadcast(std::span<float> data, int root) override { comm_->broadcast(data, root); }
    void all_gather(std::span<const float> in, std::span<float> out) override {
        comm_->all_gather(in, out);
    }
    // Each byte as a float (exact), padded to the longest text.
    std::vector<std::string> all_gather_text(const std::string& text) override {
        const std::size_t n = std::size_t(count());
        std::vector<float> lengths(n);
        const float length = float(text.size());
        comm_->all_gather(std::span<const float>(&length, 1), lengths);
        const auto longest = std::size_t(*std::max_element(lengths.begin(), lengths.end()));
        std::vector<float> mine(longest, 0.0F);
        std::transform(text.begin(), text.end(), mine.begin(),
                       [](char c) { return float(static_cast<unsigned char>(c)); });
        std::vector<float> all(longest * n);
        comm_->all_gather(mine, all);
        std::vector<std::string> texts(n);
        for (std::size_t p = 0; p < n; ++p)
            for (std::size_t i = 0; i < std::size_t(lengths[p]); ++i)
                texts[p].push_back(char(static_cast<unsigned char>(all[p * longest + i])));
        return texts;
    }
    void barrier() override { comm_->barrier(); }
    void abort(const std::string& reason) override { comm_->abort(reason); }
    // Threads never die apart.
    std::vector<std::string> silent_processes(std::chrono::milliseconds) override { return {}; }
    // Threads stand for processes with one ThreadComm each; a second channel would need a second
    // group made with the first (not needed by the tests that use this).
    std::unique_ptr<comm::ProcessGroup> duplicate() override {
        throw std::logic_error("ThreadProcesses has no duplicate");
    }

  private:
    std::unique_ptr<comm::ThreadComm> comm_;
    bool fail_;
};

}  // namespace scalelab::testing
