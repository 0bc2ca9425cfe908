#include "problem_list.h"

namespace scalelab {

void ProblemList::add(std::string problem) {
    if (kept_problems_.size() < kept_)
        kept_problems_.push_back(std::move(problem));
    else
        ++more_;
}

std::vector<std::string> ProblemList::lines(const std::string& where) const {
    std::vector<std::string> lines = kept_problems_;
    if (more_ > 0)
        lines.push_back(where + "... and " + std::to_string(more_) + " more problem" +
                        (more_ == 1 ? "" : "s"));
    return lines;
}

}  // namespace scalelab
