#pragma once

#include <memory>
#include <vector>

#include "optim/optimizer.h"
#include "optim/parameter_segment.h"
#include "train/run_spec.h"

namespace scalelab::optim {

// The one place that turns a run spec into an optimiser for one replica's flat buffers:
// spec.optimizer picks SGD (momentum, Nesterov), LARS/LARC, LAMB, NovoGrad or AdamW, with the
// spec's weight-decay and adaptation exclusions. Throws Error(InvalidSpec) for settings the
// optimiser rejects.
std::unique_ptr<Optimizer> make_optimizer(const RunSpec& spec, std::vector<ParamSegment> segments);

}  // namespace scalelab::optim
