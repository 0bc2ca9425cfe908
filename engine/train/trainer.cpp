#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <sstream>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "backend/device_inventory.h"
#include "data/sampler.h"
#include "error.h"
#include "optim/lr_schedule.h"
#include "train/cpu_contention.h"
#include "train/device_group.h"
#include "train/device_threads.h"
#include "train/device_worker.h"
#include "train/run_gpus.h"

namespace scalelab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

// The first steps of a run create kernels and fault memory in; rates leave them out.
constexpr std::int64_t kWarmupSteps = 5;

std::vector<std::uint32_t> evaluation_shard(std::size_t count, int ranks, int rank) {
    // Every validation sample exactly once: rank r takes r, r + N, r + 2N, ...
    std::vector<std::uint32_t> shard;
    for (std::size_t i = std::size_t(rank); i < count; i += std::size_t(ranks))
        shard.push_back(std::uint32_t(i));
    return shard;
}

// A GPU device's host thread only enqueues work: one core each. CPU devices share the cores.
int threads_per_device(const RunSpec& spec) {
    if (spec.device == DeviceKind::Gpu)
        return 1;
    return spec.threads > 0 ? spec.threads : std::max(1, cpu::available_cores() / spec.devices);
}

}  // namespace

Trainer::Trainer(RunSpec spec, const data::TrainTest& data, MetricsSink& sink)
    : spec_(std::move(spec)), data_(data), sink_(sink) {
    std::vector<std::string> problems = spec_.validate();
    const auto& train = data_.train;
    if (train.count() == 0 || data_.test.count() == 0)
        problems.push_back(
            "the dataset has no training or no test images: use a dataset (or subsets) with both");
    if (train.height != train.width || train.height % 4 != 0 ||
        (train.channels != 1 && train.channels != 3))
        problems.push_back(
            "the models take square 1- or 3-channel images whose side is a "
            "multiple of 4; this dataset's are " +
            std::to_string(train.channels) + "x" + std::to_string(train.height) + "x" +
            std::to_string(train.width));
    if (problems.empty() && spec_.device == DeviceKind::Gpu) {
        const DeviceInventory inventory = discover_devices();
        GpuSelection selection = select_run_gpus(spec_, inventory);
        problems.insert(problems.end(), selection.problems.begin(), selection.problems.end());
        gpus_ = std::move(selection.indices);
    }
    if (problems.empty() && train.count() < std::size_t(spec_.devices))
        problems.push_back("the training set has " + std::to_string(train.count()) +
                           " image(s), fewer than the " + std::to_string(spec_.devices) +
                           " devices: use fewer devices or a larger train_subset");
    if (!problems.empty()) {
        std::string message;
        for (const auto& p : problems)
            message += (message.empty() ? "" : "; ") + p;
        throw Error(ErrorKind::InvalidSpec, message);
    }
}

RunEnd Trainer::run() {
    RunEnd end;
    try {
        end = train();
    } catch (const std::exception& e) {
        end = RunEnd{RunStatus::Failed, e.what(), 0, 0, {}};
    }
    sink_.on_end(end);
    return end;
}

RunEnd Trainer::train() {
    const int devices = spec_.devices;
    RunInfo info;
    info.devices = devices;
    info.threads_per_device = threads_per_device(spec_);
    info.cores = cpu::available_cores();
    info.global_batch = devices * spec_.batch * spec_.accumulation;
    const data::EpochSampler probe(data_.train.count(), spec_.seed, devices, 0);
    info.steps_per_epoch =
        (data::batch_count(probe.per_rank(), spec_.batch, false) + spec_.accumulation - 1) /
        spec_.accumulation;
    if (spec_.device == DeviceKind::Cpu && devices * info.threads_per_device > info.cores)
        info.warnings.push_back(std::to_string(devices) + " devices x " +
                                std::to_string(info.threads_per_device) + " threads exceed the " +
                                std::to_string(info.cores) +
                                " cores: devices share cores, so throughput cannot scale");

    // Barriers may poll briefly only when every device thread has cores of its own.
    DeviceGroup group(
        devices, gpus_, {.gpu = 0, .tf32 = spec_.tf32, .deterministic = spec_.deterministic},
        spec_.collective_timeout_s, info.threads_per_device, spec_.sync_bn, info.warnings.empty());
    std::vector<RunEnd> ends(static_cast<std::size_t>(devices));
    DeviceThreads threads(group, spec_);
    threads.run(devices, [&](int rank) {
        DeviceGroup::Rank devices_of_rank = group.rank(rank);
        if (communicator_hook_)
            communicator_hook_(rank, devices_of_rank.comm());
        ends[std::size_t(rank)] = run_device(rank, devices_of_rank, info);
    });

    if (const auto& failure = threads.failure())
        return RunEnd{RunStatus::Failed,
                      "device " + std::to_string(failure->rank) + ": " + failure->message,
                      0,
                      0,
                      {}};
    if (cancelled_.load()) {
        RunEnd end = ends[0];
        end.status = RunStatus::Cancelled;
        if (end.message.empty())
            end.message = "cancelled";
        return end;
    }
    // Neither a device's failure nor a cancel: rank 0's end would be an empty, unfinished one.
    if (const auto& abort_reason = threads.abort_reason())
        return RunEnd{RunStatus::Failed, "communication aborted: " + *abort_reason, 0, 0, {}};
    return ends[0];
}

RunEnd Trainer::run_device(int rank, DeviceGroup::Rank& devices_of_rank, const RunInfo& info) {
    const auto& train = data_.train;
    const int devices = spec_.devices;
    const Shape image{1, train.channels, train.height, train.width};
    DeviceWorker worker(spec_, image, std::move(devices_of_rank.backend), devices_of_rank.comm(),
                        devices_of_rank.sync_bn.get(), devices_of_rank.host.get());
    const data::EpochSampler sampler(train.count(), spec_.seed, devices, rank);
    const std::vector<std::uint32_t> eval_shard =
        evaluation_shard(data_.test.count(), devices, rank);
    // A GPU allocates nothing once its collectives start (Replica::prepare says why); the first
    // is the broadcast below. CPU devices make their kernels on first use: an allocation there
    // blocks no collective, and preparing would cost every run a few steps' time.
    if (spec_.device == DeviceKind::Gpu)
        worker.prepare(data::batch_sizes(sampler.per_rank(), spec_.batch, false),
                       data::batch_sizes(eval_shard.size(), spec_.batch, false));
    worker.broadcast_initial_state();

    const data::Normalization norm = data::channel_statistics(train);
    data::BatchLoader loader(train, norm,
                             {spec_.batch, false,
                              [&] {
                                  switch (spec_.augment) {  // -Wswitch flags a mode left out
                                      case Augmentation::None:
                                          return data::AugmentMode::None;
                                      case Augmentation::Flip:
                                          return data::AugmentMode::Flip;
                                      case Augmentation::CropFlip:
                                          return data::AugmentMode::CropFlip;
                                      case Augmentation::Assessment:
                                          return data::AugmentMode::Assessment;
                                  }
                                  return data::AugmentMode::None;
                              }(),
                              2, spec_.seed, rank});
    data::BatchLoader eval_loader(data_.test, norm,
                                  {spec_.batch, false, data::AugmentMode::None, 2, spec_.seed});
    const int samples_per_epoch = int(sampler.per_rank());
    const int step_samples = spec_.batch * spec_.accumulation;
    const optim::LrSchedule schedule(spec_, info.steps_per_epoch);
    if (rank == 0) {
        RunInfo start = info;
        start.parameters = worker.replica().model().parameter_count();
        sink_.on_start(start);
    }

    // Rank 0 reports what other programs took from the cores while the run trained.
    const std::optional<CpuTimes> cpu_at_start =
        rank == 0 ? read_cpu_times() : std::optional<CpuTimes>{};
    const auto other_programs_share_so_far = [&] {
        const std::optional<CpuTimes> now = cpu_at_start ? read_cpu_times() : std::nullopt;
        const std::optional<double> share =
            now ? other_programs_share(*cpu_at_start, *now) : std::nullopt;
        return share.value_or(std::numeric_limits<double>::quiet_NaN());
    };

    std::int64_t step = 0;
    int epochs_at_target = 0;
    double steady_seconds = 0, steady_images = 0;
    double trained_seconds = 0, images_seen = 0;
    std::vector<TargetReached> reached_all;  // first crossings of spec_.targets
    auto ending = [&](RunEnd end) {
        end.targets = reached_all;
        return end;
    };
    DeviceStepTimes carried;  // the step-end gather's wait, counted in the next step
    for (int epoch = 1; epoch <= spec_.epochs; ++epoch) {
        loader.start_epoch(sampler.indices(epoch - 1), epoch);
        GlobalTotals epoch_totals;
        double epoch_seconds = 0;
        for (int s = 0; s < info.steps_per_epoch; ++s) {
            if (cancelled_.load(std::memory_order_relaxed)) {
                // Every group: another rank may already wait in a sync-BN collective.
                devices_of_rank.comm().abort("cancelled");
                devices_of_rank.host->abort("cancelled");
                if (devices_of_rank.sync_bn)
                    devices_of_rank.sync_bn->abort("cancelled");
                return ending(RunEnd{RunStatus::Cancelled,
                                     "cancelled at step " + std::to_string(step),
                                     step,
                                     epoch,
                                     {}});
            }
            if (step_hook_)
                step_hook_(rank, step + 1);
            const auto start = Clock::now();
            const double lr = schedule.lr(step);
            ++step;
            // This step's share of the epoch: k micro-batches, or what is left at its end.
            const int samples = std::min(step_samples, samples_per_epoch - s * step_samples);
            const int micro = (samples + spec_.batch - 1) / spec_.batch;
            DeviceStepTimes times = carried;
            const NextWork next =
                s + 1 < info.steps_per_epoch ? NextWork::TrainStep : NextWork::Other;
            const GlobalTotals totals = worker.train_step([&] { return loader.next(); }, micro,
                                                          samples, lr, step, times, next);
            const double local_seconds = seconds_since(start) + carried.wait;
            const auto gather_start = Clock::now();
            const std::vector<DeviceStepTimes> all = worker.gather_times(times);
            carried = DeviceStepTimes{};
            carried.wait = seconds_since(gather_start);

            epoch_seconds += local_seconds;
            if (step > kWarmupSteps) {
                steady_seconds += local_seconds;
                steady_images += totals.count;
            }
            if (rank == 0) {
                StepMetrics m;
                m.step = step;
                m.epoch = epoch;
                m.step_in_epoch = s + 1;
                m.steps_per_epoch = info.steps_per_epoch;
                m.loss = totals.loss();
                m.accuracy = totals.accuracy();
                m.lr = lr;
                m.seconds = local_seconds;
                m.images_per_s = totals.count / local_seconds;
                m.devices = all;
                m.noise_scale = totals.noise_scale;
                sink_.on_step(m);
            }
            if (!std::isfinite(totals.loss_sum)) {
                std::ostringstream msg;
                msg << "the loss became " << totals.loss() << " at step " << step << " (epoch "
                    << epoch << ", lr " << lr << "): lower the learning rate or add warm-up";
                return ending(RunEnd{RunStatus::Diverged, msg.str(), step, epoch, {}});
            }
            epoch_totals.loss_sum += totals.loss_sum;
            epoch_totals.correct += totals.correct;
            epoch_totals.count += totals.count;
        }
        trained_seconds += epoch_seconds;
        images_seen += epoch_totals.count;
        const GlobalTotals val = worker.evaluate(eval_loader, eval_shard);
        std::vector<TargetReached> reached;
        for (double target : spec_.targets) {
            const bool before =
                std::any_of(reached_all.begin(), reached_all.end(),
                            [&](const TargetReached& r) { return r.target == target; });
            if (!before && val.accuracy() >= target)
                reached.push_back({target, trained_seconds, step, epoch, images_seen});
        }
        reached_all.insert(reached_all.end(), reached.begin(), reached.end());
        if (rank == 0)
            sink_.on_epoch(EpochMetrics{epoch, step, epoch_totals.loss(), epoch_totals.accuracy(),
                                        val.loss(), val.accuracy(), epoch_seconds,
                                        epoch_totals.count / epoch_seconds,
                                        steady_seconds > 0 ? steady_images / steady_seconds : 0,
                                        other_programs_share_so_far(), reached});

        // Every rank sees the same validation sums, so all of them stop at the same epoch.
        epochs_at_target = val.accuracy() >= spec_.target_accuracy ? epochs_at_target + 1 : 0;
        if (spec_.target_accuracy > 0 && epochs_at_target >= spec_.patience) {
            std::ostringstream msg;
            msg << "validation accuracy reached " << spec_.target_accuracy << " for "
                << spec_.patience << " consecutive epoch(s) at epoch " << epoch;
            return ending(RunEnd{RunStatus::ReachedTarget, msg.str(), step, epoch, {}});
        }
    }
    return ending(RunEnd{RunStatus::Finished,
                         "trained " + std::to_string(spec_.epochs) + " epochs",
                         step,
                         spec_.epochs,
                         {}});
}

}  // namespace scalelab
