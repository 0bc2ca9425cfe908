#include <algorithm>
#include <stdexcept>

#include "comm/process_group.h"

namespace scalelab::comm {

namespace {

class SingleProcess final : public ProcessGroup {
  public:
    int index() const override { return 0; }
    int count() const override { return 1; }
    std::string host() const override { return "localhost"; }

    void all_reduce_sum(std::span<float>) override {}
    void broadcast(std::span<float>, int root) override { check_root(root); }
    void all_gather(std::span<const float> in, std::span<float> out) override {
        if (out.size() != in.size())
            throw std::logic_error("all_gather over 1 process: out must be as large as in");
        std::copy(in.begin(), in.end(), out.begin());
    }
    std::vector<std::string> all_gather_text(const std::string& text) override { return {text}; }
    void barrier() override {}
    std::unique_ptr<ProcessGroup> duplicate() override { return std::make_unique<SingleProcess>(); }

  private:
    static void check_root(int root) {
        if (root != 0)
            throw std::logic_error("broadcast over 1 process from process " + std::to_string(root));
    }
};

}  // namespace

std::unique_ptr<ProcessGroup> single_process() {
    return std::make_unique<SingleProcess>();
}

}  // namespace scalelab::comm
