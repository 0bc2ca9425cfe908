#pragma once

#include "data/augment.h"
#include "data/load.h"
#include "train/run_spec.h"

namespace scalelab {

// What a run reads: the spec's dataset, its folder (empty: the dataset's default) and the
// synthetic generator's settings, seeded with the run's seed.
data::DatasetRequest dataset_request(const RunSpec& spec);

// The batch loader's augmentation for the spec's.
data::AugmentMode augment_mode(Augmentation augment);

}  // namespace scalelab
