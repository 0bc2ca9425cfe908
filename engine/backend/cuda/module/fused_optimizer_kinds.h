#pragma once

// One fused GPU optimiser per CPU optimiser of engine/optim (fused_*.h, run by GpuPasses), each
// made from the CPU class's (already checked) config. Every one updates flat buffers of GPU
// memory of the current device in place, on `stream`, with the CPU class's arithmetic in the
// same float operations; its state is allocated and zero-filled once, here, and step() neither
// allocates nor waits.

#include <cuda_runtime_api.h>

#include <memory>
#include <vector>

#include "optim/adamw.h"
#include "optim/lamb.h"
#include "optim/lars.h"
#include "optim/novograd.h"
#include "optim/optimizer.h"
#include "optim/parameter_segment.h"
#include "optim/sgd.h"

namespace scalelab::cuda {

// One elementwise pass.
std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::SgdConfig& config, cudaStream_t stream);
std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::AdamWConfig& config, cudaStream_t stream);

// The adapted segments' norms first (two launches over all of them), then the update pass.
std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::LarsConfig& config, cudaStream_t stream);
std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::LambConfig& config, cudaStream_t stream);
std::unique_ptr<optim::Optimizer> make_fused(std::vector<optim::ParamSegment> segments,
                                             const optim::NovoGradConfig& config,
                                             cudaStream_t stream);

}  // namespace scalelab::cuda
