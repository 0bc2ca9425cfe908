#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace scalelab {

// One gradient bucket's all-reduce on one device, in seconds from the start of that device's step
// (its first data fetch). With overlap it runs on the communication thread while backward goes
// on; without, inside exposed_comm.
struct BucketSpan {
    double start = 0;
    double end = 0;
};

// Where one device's step time went, in seconds. The parts add up to the step's wall time:
//   data + forward + backward + exposed_comm + wait + optimizer (+ what no part covers, small).
// exposed_comm is the all-reduce time backward did not hide: from the end of backward until the
// last bucket is reduced. wait is time blocked on the other devices (stragglers, barriers).
struct DeviceStepTimes {
    double data = 0;
    double forward = 0;
    double backward = 0;
    double exposed_comm = 0;
    double wait = 0;
    double optimizer = 0;
    std::vector<BucketSpan> allreduce{};  // one per bucket, in launch order (empty: one device)
    // Not a part of the sum above: of this step's all-reduces (which may overlap backward), the
    // time spent exchanging with the other processes of a run across processes
    // (Communicator::seconds_between_processes). Only the device that exchanges for its process
    // (local device 0) has it; 0 in a run of one process, and for GPUs, whose NCCL all-reduce
    // crosses processes in one operation.
    double between_processes = 0;
};

// Said once, before the first step.
struct RunInfo {
    int devices = 1;
    int threads_per_device = 1;
    int cores = 1;
    int global_batch = 0;  // devices * batch * accumulation
    int steps_per_epoch = 0;
    std::size_t parameters = 0;
    std::vector<std::string> warnings;  // e.g. more devices than cores
};

// When validation accuracy first reached one of RunSpec::targets.
struct TargetReached {
    double target = 0;
    double seconds = 0;     // training wall time so far (evaluation excluded)
    std::int64_t step = 0;  // the last step before that evaluation
    int epoch = 0;
    double images = 0;  // training images seen so far, all devices
};

struct StepMetrics {
    std::int64_t step = 0;  // counted from 1 over the whole run
    int epoch = 0;          // counted from 1
    int step_in_epoch = 0;  // counted from 1
    int steps_per_epoch = 0;
    double loss = 0;      // mean over the batch
    double accuracy = 0;  // of the batch's predictions, in [0, 1]
    double lr = 0;
    double images_per_s = 0;               // this step's global batch over this step's wall time
    double seconds = 0;                    // this step's wall time
    std::vector<DeviceStepTimes> devices;  // one per device, rank order
    // The gradient noise scale B_simple = tr(Sigma) / |G|^2 from the bias-corrected averages
    // (McCandlish et al. 2018); NaN while it cannot be estimated (one device, no accumulation).
    double noise_scale = std::numeric_limits<double>::quiet_NaN();
};

// The first steps of a run create kernels, fault memory in and settle caches and allocators:
// the steady images/s leaves them out.
inline constexpr std::int64_t steady_warmup_steps = 5;

struct EpochMetrics {
    int epoch = 0;
    std::int64_t step = 0;  // the last step of the epoch
    double train_loss = 0;  // mean over the epoch's training samples
    double train_accuracy = 0;
    double val_loss = 0;
    double val_accuracy = 0;
    double epoch_seconds = 0;  // training time of the epoch, evaluation excluded
    double images_per_s = 0;   // training images over epoch_seconds
    // Mean images/s over the run so far, leaving out its first steady_warmup_steps steps;
    // 0 until the run has trained past them.
    double steady_images_per_s = 0;
    // The share of the cores' capacity other programs used since the run started, in [0, 1]
    // (cpu_contention.h); NaN where it cannot be measured. A throughput measured while others
    // took a good share of the cores is not the engine's alone.
    double other_programs_share = std::numeric_limits<double>::quiet_NaN();
    std::vector<TargetReached> reached;  // targets first reached at this epoch's evaluation
};

enum class RunStatus { Finished, ReachedTarget, Diverged, Cancelled, Failed };
std::string_view to_string(RunStatus);

struct RunEnd {
    RunStatus status = RunStatus::Finished;
    std::string message;
    std::int64_t step = 0;  // the last step taken (the failing one when diverged)
    int epoch = 0;
    std::vector<TargetReached> targets{};  // every target reached during the run
};

// Where a trainer reports. Called from the trainer's worker threads, in order for one run; an
// implementation must return quickly (the trainer does not wait for a slow consumer's work:
// queue it). on_end is called exactly once, however the run ends.
class MetricsSink {
  public:
    virtual ~MetricsSink() = default;
    virtual void on_start(const RunInfo&) {}
    virtual void on_step(const StepMetrics&) {}
    virtual void on_epoch(const EpochMetrics&) {}
    virtual void on_end(const RunEnd&) {}
};

}  // namespace scalelab
