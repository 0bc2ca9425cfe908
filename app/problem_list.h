#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace scalelab {

// The problems found in one input (a config file, a lesson file, the flags of a command), for a
// message that lists them: the first `kept` in full, the rest only counted, so that a file
// with millions of mistakes gives a short message and keeps no more than `kept` of them.
class ProblemList {
  public:
    static constexpr std::size_t default_kept = 20;

    explicit ProblemList(std::size_t kept = default_kept) : kept_(kept) {}

    void add(std::string problem);
    bool empty() const { return kept_problems_.empty(); }

    // The kept problems, then "<where>... and <n> more problems" when some were only counted
    // (`where` as the kept ones start: "lesson.json: ").
    std::vector<std::string> lines(const std::string& where = {}) const;

  private:
    std::size_t kept_;
    std::vector<std::string> kept_problems_;
    std::size_t more_ = 0;
};

}  // namespace scalelab
