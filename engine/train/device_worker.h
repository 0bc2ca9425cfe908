#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "data/batch_loader.h"
#include "train/gradient_reducer.h"
#include "train/metrics.h"
#include "train/noise_scale.h"
#include "train/replica.h"
#include "train/step_timeline.h"

namespace scalelab {

// Sums over every device of a step or an evaluation: the same values on every rank.
struct GlobalTotals {
    double loss_sum = 0;
    double correct = 0;
    double count = 0;

    double noise_scale = std::numeric_limits<double>::quiet_NaN();  // B_simple, after a step

    double loss() const { return count > 0 ? loss_sum / count : 0.0; }
    double accuracy() const { return count > 0 ? correct / count : 0.0; }
};

// What follows a training step on the same source of batches: another training step, or
// something else (an evaluation, the run's end).
enum class NextWork { TrainStep, Other };

// One device of a data-parallel run: its replica, its gradient reducer and its end of the
// communicator. Every rank's worker makes the same calls in the same order (DDP's invariant:
// the collectives inside them then match up).
class DeviceWorker {
  public:
    // sync_bn: this rank of a second group of the same ranks, for synchronised batch norm
    // (spec.sync_bn with more than one device): its all-gathers and all-reduces run on this
    // worker's thread during forward and backward, while the gradient reducer's thread uses
    // `comm`, and a communicator serves one thread at a time. Ignored (may be null) otherwise.
    //
    // comm works on the backend's memory (parameters, gradients, buffers); host_comm on the
    // host's (the step's totals and times). For CPU devices they are one and the same (null
    // host_comm); a GPU run gives NCCL for the first and a ThreadComm group for the second.
    DeviceWorker(const RunSpec& spec, Shape image, std::unique_ptr<Backend> backend,
                 comm::Communicator& comm, comm::Communicator* sync_bn = nullptr,
                 comm::Communicator* host_comm = nullptr);

    // Replica::prepare at these sizes, then a barrier of the host group: no rank starts its
    // first collective (broadcast_initial_state) before every rank has allocated all it will
    // (made its worker, its kernels and their memory). Every rank calls it, with the same
    // train_sizes, before broadcast_initial_state.
    void prepare(std::span<const int> train_sizes, std::span<const int> eval_sizes);

    // DDP's start: every replica takes rank 0's parameters and buffers.
    void broadcast_initial_state();

    // One optimisation step over `micro_batches` micro-batches holding `samples` samples in all,
    // fetched one at a time from next_batch (a loader's batch is valid until the next fetch):
    //   for each micro-batch: forward, loss, backward of loss_sum / samples
    //   (earlier micro-batches' gradients summed locally; the last one's all-reduced bucket by
    //   bucket as backward produces them, averaging over devices: the mean over the global batch)
    //   then the global loss; if it is finite, p <- optimiser(p, g, lr) on every replica.
    // When a training step follows (`next`), its first batch is fetched and staged once this
    // step's work is all given, before the step waits for the device: on a GPU its copy runs
    // beside this step's optimiser instead of after it, with the GPU idle. That step then trains
    // on it without fetching. Otherwise nothing is fetched ahead, so that an evaluation, which
    // uploads its own batches, finds the batch source where the epoch left it.
    // Adds this device's time per phase to `times` (StepTimeline: on a GPU, its own time, with
    // one wait for the GPU per step, at its end; a batch fetched ahead counts in the data phase
    // of the step that fetched it) and sets times.allreduce to this step's bucket all-reduce
    // spans (none with one device), measured from the step's start.
    GlobalTotals train_step(const std::function<const data::Batch*()>& next_batch,
                            int micro_batches, int samples, double lr, std::int64_t step,
                            DeviceStepTimes& times, NextWork next);

    // This device's share (`indices`) of the validation set; sums combined over all devices.
    // Batch-norm running statistics are first averaged over the devices, so that every
    // replica evaluates (and goes on training) with the same ones. Each batch's loss is asked
    // for once the next batch is staged (see Replica::stage).
    GlobalTotals evaluate(data::BatchLoader& loader, std::vector<std::uint32_t> indices);

    // Every device's step times, in rank order (a collective: all ranks call it). `mine` is what
    // train_step filled: its all-reduce spans must be one per bucket (none with one device).
    std::vector<DeviceStepTimes> gather_times(const DeviceStepTimes& mine);

    Replica& replica() { return replica_; }
    const GradientReducer& reducer() const { return reducer_; }

  private:
    // next_batch's batch; throws Error(Internal) when it has none.
    static const data::Batch* fetch(const std::function<const data::Batch*()>& next_batch);
    // Sums of loss, correct predictions, samples and (when given) one more value over all
    // devices, in one small all-reduce.
    GlobalTotals all_reduce_totals(const StepResult& local, float extra = 0,
                                   float* extra_sum = nullptr);
    // sum_i v_i^2 of a buffer in the backend's memory, in double.
    double squared_norm(std::span<const float> v);
    // Both communicators' seconds between processes so far (one, when they are the same).
    double seconds_between_processes() const;

    comm::Communicator& comm_;
    comm::Communicator& host_comm_;
    Replica replica_;
    // Gradients of a step's earlier micro-batches (backend memory). Declared before the reducer,
    // which is given a view of it each step, so that it goes after the reducer.
    DeviceBuffer accumulated_;
    GradientReducer reducer_;
    StepTimeline timeline_;
    // The next step's first batch, fetched and staged by the step before; null when none was.
    const data::Batch* fetched_ahead_ = nullptr;
    NoiseScaleEstimator noise_;
    std::vector<float> gather_in_, gather_out_;  // gather_times' buffers, reused every step
};

}  // namespace scalelab
