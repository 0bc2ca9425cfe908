#include "comm/process_group.h"

namespace scalelab::comm {

std::string gone_text(const std::vector<std::string>& silent) {
    std::string names;
    for (const std::string& name : silent)
        names += (names.empty() ? "" : ", ") + name;
    return names + (silent.size() == 1
                        ? " no longer answers: it died, was killed or lost its connection"
                        : " no longer answer: they died, were killed or lost their connections");
}

std::string made_by_process_0(ProcessGroup& processes, const std::function<std::string()>& make) {
    const std::string mine = processes.index() == 0 ? make() : std::string();
    return processes.all_gather_text(mine).front();
}

}  // namespace scalelab::comm
