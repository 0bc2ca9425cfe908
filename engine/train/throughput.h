#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "comm/process_group.h"
#include "train/metrics.h"

namespace scalelab {

// The training-throughput benchmark: the same data-parallel training step a run takes
// (forward, loss, backward, gradient all-reduce, optimiser) on `devices` CPU devices or GPUs, on
// batches sliced from an in-memory dataset, timed in windows after a warm-up, as
// ../shared/anchors/torch_anchor.py times PyTorch. images/s counts all devices' images.
struct ThroughputConfig {
    std::string model = "cnn";
    int width = 10;
    int batch = 128;
    int threads = 1;
    int devices = 1;        // data-parallel devices, each with `threads` threads and `batch` images
    std::vector<int> gpus;  // the GPUs, one per device (as many as `devices`); empty: CPU devices
    int channels = 1;
    int image_size = 28;
    int warmup_steps = 5;
    int windows = 5;
    int images_per_window = 4096;  // steps per window: max(8, ceil(images / batch))
    bool sync_bn = false;          // batch-norm statistics over the global batch (RunSpec's)
    // The processes the step spans, each with `devices` devices (as Trainer::set_process_group);
    // null: this process alone. images/s then counts every process's images, and the result
    // is process 0's. Every process calls measure_training_throughput with the same config.
    std::shared_ptr<comm::ProcessGroup> processes;
    // For fault-injection tests, as Trainer::set_communicator_hook: called on each device's
    // thread with its gradient communicator, before the device's first step.
    std::function<void(int rank, comm::Communicator&)> communicator_hook;
};

struct ThroughputResult {
    double images_per_s_min = 0;
    double images_per_s_median = 0;
    double images_per_s_max = 0;
    double flops_per_image = 0;  // forward + backward, 2 flops per multiply-add
    double gflops = 0;           // at the median images/s
    // Where the first device's steps in the timed windows went, by part, in seconds per step
    // (the mean; no bucket spans): what to attack when images/s falls short.
    DeviceStepTimes step;
};

// Throws Error(InvalidSpec) for an unknown model or a non-positive batch, threads or windows,
// the first device's error when one fails (out of memory with the batch to try instead, as a
// run says it), and Error(Internal) with the reason when the devices' communicators were
// aborted (an NCCL error, a collective past its timeout).
ThroughputResult measure_training_throughput(const ThroughputConfig&);

}  // namespace scalelab
