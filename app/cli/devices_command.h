#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// `scalelab-cli devices`: what runs can use on this machine: each GPU (index, name, memory,
// compute capability, the GPUs it can access directly) or why there is none, and the CPU cores
// the CPU devices share. `args` are the words after "devices"; only --help is a flag. Returns
// the exit code of exit_codes.h: exit_ok also when there is no GPU.
int run_devices_command(const std::vector<std::string>& args);

}  // namespace scalelab::cli
