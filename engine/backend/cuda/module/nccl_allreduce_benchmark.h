#pragma once

#include <cstddef>
#include <vector>

#include "comm/allreduce_benchmark.h"

namespace scalelab::cuda {

// gpu_runtime.h's run_gpu_allreduce_benchmark, with NCCL.
std::vector<comm::AllReduceRow> run_nccl_allreduce_benchmark(
    const std::vector<int>& gpus, const std::vector<std::size_t>& sizes_bytes, int iterations);

}  // namespace scalelab::cuda
