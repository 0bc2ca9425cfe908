#pragma once

#include <string>

#include "comm/process_group.h"
#include "train/run_spec.h"

namespace scalelab {

// Every process of a run must train the same experiment: a process started with other flags
// would train other data or another model and silently spoil the all-reduce. Every process
// calls this at start, collectively, before any training. It compares each field of
// spec_fields() across the processes (its text, so a difference can be named) and returns ""
// when all agree, else one line per differing field (the first five), each naming the field,
// the processes and their hosts:
//   "process 1 (host b) was started with batch 64, process 0 (host a) with batch 128"
std::string experiment_mismatch(comm::ProcessGroup& processes, const RunSpec& spec);

}  // namespace scalelab
