#pragma once

#include <memory>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"
#include "train/run_spec.h"

namespace scalelab::optim {

// The one place that turns a run spec into an optimiser for one replica's flat buffers: SGD
// (momentum, Nesterov, weight decay) for now; LARS/LARC, LAMB, NovoGrad and AdamW are chosen
// here once the spec can name them. Throws Error(InvalidSpec) for optimiser settings the
// optimiser rejects.
std::unique_ptr<Optimizer> make_optimizer(const RunSpec& spec, std::vector<ParamSegment> segments);

}  // namespace scalelab::optim
