#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"
#include "train/run_spec.h"

namespace scalelab::cuda {

// Every optimiser of make_optimizer as fused kernels over a replica's flat buffers in GPU memory
// of the current device, run on `stream`: the backend's compute stream, so that each step runs
// after the kernels that wrote the gradients and before those that read the parameters next,
// with no wait. The spec is checked by the CPU optimiser's code, with its messages.
std::unique_ptr<optim::Optimizer> make_fused_optimizer(const RunSpec& spec,
                                                       std::vector<optim::ParamSegment> segments,
                                                       cudaStream_t stream);

}  // namespace scalelab::cuda
