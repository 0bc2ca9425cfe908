#include "comm/process_group.h"

namespace scalelab::comm {

// Built without MPI: every process runs alone, whatever started it.
std::unique_ptr<ProcessGroup> join_launched_processes(std::chrono::milliseconds) {
    return single_process();
}

}  // namespace scalelab::comm
