#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli export pytorch --out DIR [train flags]`: the experiment the train flags (and
// --config) describe, written as a PyTorch DDP script and its files (write_pytorch_export).
// Returns the exit code: 0 written, 2 bad input (a flag, or what PyTorch cannot carry, named),
// 1 a file that could not be written.
int run_export_command(const std::vector<std::string>& args);

// What `scalelab-cli export --help` prints (the train flags are train_help's).
std::string export_help();

}  // namespace scalelab::cli
