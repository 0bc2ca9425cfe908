#include <algorithm>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "comm/communicator.h"
#include "comm/process_group.h"

namespace scalelab::comm {

namespace {

// Shared by a group and its duplicates, as MPI's abort is.
struct AbortState {
    std::mutex mutex;
    std::string reason;  // empty while not aborted
};

class SingleProcess final : public ProcessGroup {
  public:
    explicit SingleProcess(std::shared_ptr<AbortState> state) : state_(std::move(state)) {}

    int index() const override { return 0; }
    int count() const override { return 1; }
    std::string host() const override { return "localhost"; }

    void all_reduce_sum(std::span<float>) override { throw_if_aborted(); }
    void broadcast(std::span<float>, int root) override {
        throw_if_aborted();
        if (root != 0)
            throw std::logic_error("broadcast over 1 process from process " + std::to_string(root));
    }
    void all_gather(std::span<const float> in, std::span<float> out) override {
        throw_if_aborted();
        if (out.size() != in.size())
            throw std::logic_error("all_gather over 1 process: out must be as large as in");
        std::copy(in.begin(), in.end(), out.begin());
    }
    std::vector<std::string> all_gather_text(const std::string& text) override {
        throw_if_aborted();
        return {text};
    }
    void barrier() override { throw_if_aborted(); }
    void abort(const std::string& reason) override {
        std::lock_guard lock(state_->mutex);
        if (state_->reason.empty())
            state_->reason = reason.empty() ? "aborted" : reason;
    }
    std::vector<std::string> silent_processes(std::chrono::milliseconds) override { return {}; }
    std::unique_ptr<ProcessGroup> duplicate() override {
        return std::make_unique<SingleProcess>(state_);
    }

  private:
    void throw_if_aborted() const {
        std::lock_guard lock(state_->mutex);
        if (!state_->reason.empty())
            throw Aborted(state_->reason);
    }

    std::shared_ptr<AbortState> state_;
};

}  // namespace

std::unique_ptr<ProcessGroup> single_process() {
    return std::make_unique<SingleProcess>(std::make_shared<AbortState>());
}

}  // namespace scalelab::comm
