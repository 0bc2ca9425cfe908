#pragma once

#include <QString>

#include "backend/backend.h"
#include "train/run_spec.h"

namespace scalelab {

// Writes the run's initial parameters and buffers (build_run_model: what every device starts
// from) to `path` as an .npz file that numpy reads without ScaleLab: one float32 array per
// parameter and batch-norm buffer, named as ScaleLab names it ("conv1.weight",
// "stem.bn.running_var"), in PyTorch's layout, so that an nn.Module with the same names loads
// it (docs/pytorch.md). `image`: one sample's shape (n = 1). Whole or not at all; the reason
// when it could not be written, empty when it was.
QString write_initial_state(const RunSpec& spec, Shape image, const QString& path);

}  // namespace scalelab
