#pragma once

#include <string>
#include <vector>

namespace scalelab::cli {

// One row of a `bench train` sweep.
struct ThroughputPoint {
    std::string model;  // as the table names it: wrn-4 for wrn of width 4
    int threads = 1;
    int devices = 1;
    int batch = 1;
    double images_per_s = 0;
};

// How far a larger batch may fall below a smaller one before bench train warns. The hardware's
// images/s rise with the batch and level off, or fall gently where a batch's activations
// outgrow a cache (10-20% from batch 8 to 512 for the convolutional models on CPU devices,
// docs/throughput.md); a larger fall is a kernel that changes its method at some size, as the
// linear layers' did at batch 16, or a machine that other work disturbed.
inline constexpr double throughput_drop_warning = 0.20;

// One message for each point whose images/s is more than throughput_drop_warning below the best
// of a smaller batch of the same model, threads and devices, naming both, in the order of
// `points`. Points of other models, thread or device counts are never compared.
std::vector<std::string> throughput_drops(const std::vector<ThroughputPoint>& points);

}  // namespace scalelab::cli
