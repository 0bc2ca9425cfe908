#include "comm/process_group.h"

namespace scalelab::comm {

std::string made_by_process_0(ProcessGroup& processes, const std::function<std::string()>& make) {
    const std::string mine = processes.index() == 0 ? make() : std::string();
    return processes.all_gather_text(mine).front();
}

}  // namespace scalelab::comm
