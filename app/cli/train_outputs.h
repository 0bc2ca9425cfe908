#pragma once

#include <string>
#include <vector>

#include "cli/train_options.h"

namespace scalelab::cli {

// What keeps train's outputs (--metrics-out, --save-initial) from being written, found before
// anything is read or written, each naming the flag: an output that is the run store or one of
// its journals, the --config file, a file of the dataset's folder or the other output (the same
// file, however spelt: links and relative paths count), and one that cannot be written at all
// (a folder, a device, a folder that does not exist). Empty when both can be written.
std::vector<std::string> train_output_problems(const TrainOptions& options);

}  // namespace scalelab::cli
