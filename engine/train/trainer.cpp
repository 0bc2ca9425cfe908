#include "train/trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/device_inventory.h"
#include "data/sampler.h"
#include "error.h"
#include "optim/lr_schedule.h"
#include "train/cpu_contention.h"
#include "train/dataset_request.h"
#include "train/device_group.h"
#include "train/device_threads.h"
#include "train/device_worker.h"
#include "train/run_gpus.h"

namespace scalelab {

namespace {

using Clock = std::chrono::steady_clock;

// After a cancel across processes, how long process 0 waits for the others' answers, and how
// long the others wait before they stop (longer): within the second launchers leave between
// SIGTERM and SIGKILL (Open MPI's odls_base_sigkill_timeout).
constexpr std::chrono::milliseconds roll_call_after_cancel{400};
constexpr std::chrono::milliseconds follower_waits_after_cancel{600};

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

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

// One training step as every rank saw it.
struct TrainedStep {
    std::int64_t step = 0;  // counted from 1 over the run
    int epoch = 0;
    int step_in_epoch = 0;  // counted from 1
    double lr = 0;
    GlobalTotals totals;  // sums over every device: the same on every rank
    // This device's wall time for the step, with the wait of the previous step's gather of
    // times (which ends that step after its time was taken).
    double seconds = 0;
    std::vector<DeviceStepTimes> devices;  // every device's times, in rank order
};

// An epoch's end: its validation sums and the targets they reached for the first time.
struct EvaluatedEpoch {
    int epoch = 0;
    GlobalTotals val;
    std::vector<TargetReached> reached{};
};

// One device's share of a run, on its thread: its worker, its loaders and what the run has
// counted so far. Trainer::run_device drives it; every rank makes the same calls in the same
// order, so the collectives inside them match, and every rank stops at the same step: the
// stop checks read only sums over all devices.
class DeviceRun {
  public:
    // Makes the worker and its loaders, gives every device rank 0's parameters and buffers, and
    // (rank 0) reports the run's start.
    DeviceRun(const RunSpec& spec, const data::TrainTest& data, MetricsSink& sink,
              const std::function<void(int, std::int64_t)>& step_hook, int rank,
              DeviceGroup::Rank& devices_of_rank, const RunInfo& info)
        : spec_(spec),
          sink_(sink),
          step_hook_(step_hook),
          rank_(rank),
          devices_of_rank_(devices_of_rank),
          info_(info),
          worker_(spec, Shape{1, data.train.channels, data.train.height, data.train.width},
                  std::move(devices_of_rank.backend), devices_of_rank.comm(),
                  devices_of_rank.sync_bn.get(), devices_of_rank.host.get()),
          sampler_(data.train.count(), spec.seed, spec.devices, rank),
          eval_shard_(evaluation_shard(data.test.count(), spec.devices, rank)),
          schedule_(spec, info.steps_per_epoch),
          norm_(data::channel_statistics(data.train)),
          loader_(data.train, norm_,
                  {.batch = spec.batch,
                   .drop_last = false,
                   .augment = augment_mode(spec.augment),
                   .prefetch = 2,
                   .seed = spec.seed,
                   .rank = rank}),
          eval_loader_(data.test, norm_,
                       {.batch = spec.batch,
                        .drop_last = false,
                        .augment = data::AugmentMode::None,
                        .prefetch = 2,
                        .seed = spec.seed}) {
        // A GPU allocates nothing once its collectives start (Replica::prepare says why); the
        // first is the broadcast below. CPU devices make their kernels on first use: an
        // allocation there blocks no collective, and preparing would cost every run a few
        // steps' time.
        if (spec_.device == DeviceKind::Gpu)
            worker_.prepare(
                data::batch_sizes(sampler_.per_rank(), spec_.batch, /*drop_last=*/false),
                data::batch_sizes(eval_shard_.size(), spec_.batch, /*drop_last=*/false));
        worker_.broadcast_initial_state();

        if (rank_ == 0) {
            RunInfo start = info_;
            start.parameters = worker_.replica().model().parameter_count();
            sink_.on_start(start);
            // Rank 0 reports what other programs took from the cores while the run trained.
            cpu_at_start_ = read_cpu_times();
        }
    }

    void start_epoch(int epoch) {
        loader_.start_epoch(sampler_.indices(epoch - 1), epoch);
        epoch_totals_ = GlobalTotals{};
        epoch_seconds_ = 0;
    }

    // One optimisation step on every device, and every device's time per phase.
    TrainedStep train_step(int epoch, int step_in_epoch) {
        if (step_hook_)
            step_hook_(rank_, step_ + 1);
        const auto start = Clock::now();
        TrainedStep trained;
        trained.lr = schedule_.lr(step_);  // the schedule counts steps from 0
        trained.step = ++step_;
        trained.epoch = epoch;
        trained.step_in_epoch = step_in_epoch;
        // This step's share of the epoch: k micro-batches of b samples, or what is left at the
        // epoch's end: samples = min(b k, per_rank - (step_in_epoch - 1) b k), and
        // micro-batches = ceil(samples / b).
        const int step_samples = spec_.batch * spec_.accumulation;
        const int samples =
            std::min(step_samples, int(sampler_.per_rank()) - (step_in_epoch - 1) * step_samples);
        const int micro_batches = (samples + spec_.batch - 1) / spec_.batch;
        // The last step of an epoch fetches nothing ahead: the evaluation comes next.
        const NextWork next =
            step_in_epoch < info_.steps_per_epoch ? NextWork::TrainStep : NextWork::Other;
        DeviceStepTimes times = carried_;
        trained.totals = worker_.train_step([this] { return loader_.next(); }, micro_batches,
                                            samples, trained.lr, trained.step, times, next);
        trained.seconds = seconds_since(start) + carried_.wait;
        // The gather is a collective: it waits for the slowest device. That wait belongs to the
        // next step, whose time the devices then compare.
        const auto gather_start = Clock::now();
        trained.devices = worker_.gather_times(times);
        carried_ = DeviceStepTimes{};
        carried_.wait = seconds_since(gather_start);
        return trained;
    }

    // Counts the step into the epoch and the run, and (rank 0) reports it.
    void record_step(const TrainedStep& trained) {
        epoch_seconds_ += trained.seconds;
        if (trained.step > steady_warmup_steps) {
            steady_seconds_ += trained.seconds;
            steady_images_ += trained.totals.count;
        }
        epoch_totals_.loss_sum += trained.totals.loss_sum;
        epoch_totals_.correct += trained.totals.correct;
        epoch_totals_.count += trained.totals.count;
        if (rank_ != 0)
            return;
        StepMetrics m;
        m.step = trained.step;
        m.epoch = trained.epoch;
        m.step_in_epoch = trained.step_in_epoch;
        m.steps_per_epoch = info_.steps_per_epoch;
        m.loss = trained.totals.loss();
        m.accuracy = trained.totals.accuracy();
        m.lr = trained.lr;
        m.seconds = trained.seconds;
        m.images_per_s = trained.totals.count / trained.seconds;
        m.devices = trained.devices;
        m.noise_scale = trained.totals.noise_scale;
        sink_.on_step(m);
    }

    // A loss that is not finite (the global sum: the same on every rank) ends the run.
    std::optional<RunEnd> stop_if_diverged(const TrainedStep& trained) const {
        if (std::isfinite(trained.totals.loss_sum))
            return std::nullopt;
        std::ostringstream msg;
        msg << "the loss became " << trained.totals.loss() << " at step " << trained.step
            << " (epoch " << trained.epoch << ", lr " << trained.lr
            << "): lower the learning rate or add warm-up";
        return ending(RunStatus::Diverged, msg.str(), trained.epoch);
    }

    // Adds the epoch's training time and images to the run's, then validates on every device
    // and finds the targets of spec.targets that accuracy reached for the first time.
    EvaluatedEpoch evaluate(int epoch) {
        trained_seconds_ += epoch_seconds_;
        images_seen_ += epoch_totals_.count;
        EvaluatedEpoch evaluated{.epoch = epoch,
                                 .val = worker_.evaluate(eval_loader_, eval_shard_)};
        for (double target : spec_.targets) {
            const bool before =
                std::any_of(reached_.begin(), reached_.end(),
                            [&](const TargetReached& r) { return r.target == target; });
            if (!before && evaluated.val.accuracy() >= target)
                evaluated.reached.push_back({.target = target,
                                             .seconds = trained_seconds_,
                                             .step = step_,
                                             .epoch = epoch,
                                             .images = images_seen_});
        }
        reached_.insert(reached_.end(), evaluated.reached.begin(), evaluated.reached.end());
        return evaluated;
    }

    // Rank 0 reports the epoch: images/s = the epoch's images / its training time, and the
    // steady rate over the run so far without its first steady_warmup_steps steps.
    void record_epoch(const EvaluatedEpoch& evaluated) {
        if (rank_ != 0)
            return;
        sink_.on_epoch(EpochMetrics{
            .epoch = evaluated.epoch,
            .step = step_,
            .train_loss = epoch_totals_.loss(),
            .train_accuracy = epoch_totals_.accuracy(),
            .val_loss = evaluated.val.loss(),
            .val_accuracy = evaluated.val.accuracy(),
            .epoch_seconds = epoch_seconds_,
            .images_per_s = epoch_totals_.count / epoch_seconds_,
            .steady_images_per_s = steady_seconds_ > 0 ? steady_images_ / steady_seconds_ : 0,
            .other_programs_share = other_programs_share_so_far(),
            .reached = evaluated.reached});
    }

    // Validation accuracy at or above spec.target_accuracy for spec.patience epochs in a row
    // ends the run. Every rank sees the same validation sums, so all of them stop at the same
    // epoch.
    std::optional<RunEnd> stop_if_target_held(const EvaluatedEpoch& evaluated) {
        epochs_at_target_ =
            evaluated.val.accuracy() >= spec_.target_accuracy ? epochs_at_target_ + 1 : 0;
        if (!(spec_.target_accuracy > 0 && epochs_at_target_ >= spec_.patience))
            return std::nullopt;
        std::ostringstream msg;
        msg << "validation accuracy reached " << spec_.target_accuracy << " for " << spec_.patience
            << " consecutive epoch(s) at epoch " << evaluated.epoch;
        return ending(RunStatus::ReachedTarget, msg.str(), evaluated.epoch);
    }

    // Aborts every group of this rank: another rank may already wait in a collective (a
    // sync-BN one among them), and would otherwise wait for this one forever.
    RunEnd cancel(int epoch) {
        devices_of_rank_.comm().abort("cancelled");
        devices_of_rank_.host->abort("cancelled");
        if (devices_of_rank_.sync_bn)
            devices_of_rank_.sync_bn->abort("cancelled");
        // The state says "cancelled"; the message says where ("cancelled: stopped at step 235").
        return ending(RunStatus::Cancelled, "stopped at step " + std::to_string(step_), epoch);
    }

    RunEnd finish() const {
        return ending(
            RunStatus::Finished,
            "trained " + std::to_string(spec_.epochs) + (spec_.epochs == 1 ? " epoch" : " epochs"),
            spec_.epochs);
    }

  private:
    // Every end carries the targets the run reached, and its last step.
    RunEnd ending(RunStatus status, std::string message, int epoch) const {
        return RunEnd{.status = status,
                      .message = std::move(message),
                      .step = step_,
                      .epoch = epoch,
                      .targets = reached_};
    }

    // The share of the cores other programs took since the run started; NaN where it cannot
    // be read (and on every rank but 0, which does not read it).
    double other_programs_share_so_far() const {
        const std::optional<CpuTimes> now = cpu_at_start_ ? read_cpu_times() : std::nullopt;
        const std::optional<double> share =
            now ? other_programs_share(*cpu_at_start_, *now) : std::nullopt;
        return share.value_or(std::numeric_limits<double>::quiet_NaN());
    }

    const RunSpec& spec_;
    MetricsSink& sink_;
    const std::function<void(int, std::int64_t)>& step_hook_;
    const int rank_;
    DeviceGroup::Rank& devices_of_rank_;
    const RunInfo& info_;
    DeviceWorker worker_;
    const data::EpochSampler sampler_;
    const std::vector<std::uint32_t> eval_shard_;
    const optim::LrSchedule schedule_;
    const data::Normalization norm_;  // the training set's, for both loaders
    data::BatchLoader loader_, eval_loader_;
    std::optional<CpuTimes> cpu_at_start_;  // rank 0's only

    std::int64_t step_ = 0;    // steps taken so far
    DeviceStepTimes carried_;  // the step-end gather's wait, counted in the next step
    GlobalTotals epoch_totals_;
    double epoch_seconds_ = 0;
    double steady_seconds_ = 0, steady_images_ = 0;  // after the first steady_warmup_steps steps
    double trained_seconds_ = 0, images_seen_ = 0;   // over finished epochs
    int epochs_at_target_ = 0;
    std::vector<TargetReached> reached_;  // first crossings of spec.targets
};

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
        end = ended_early(RunStatus::Failed, e.what());
    }
    sink_.on_end(end);
    return end;
}

RunEnd Trainer::train() {
    const int devices = spec_.devices;  // this process's
    const int process = processes_ ? processes_->index() : 0;
    // The run as one group of every process's devices: what the sampler, the shards, the
    // global batch and the LR scaling rule count.
    RunSpec run_spec = spec_;
    run_spec.devices = devices * (processes_ ? processes_->count() : 1);
    RunInfo info;
    info.devices = run_spec.devices;
    info.threads_per_device = threads_per_device(spec_);
    info.cores = cpu::available_cores();
    info.global_batch = run_spec.devices * spec_.batch * spec_.accumulation;
    const data::EpochSampler probe(data_.train.count(), spec_.seed, run_spec.devices, 0);
    info.steps_per_epoch = (data::batch_count(probe.per_rank(), spec_.batch, /*drop_last=*/false) +
                            spec_.accumulation - 1) /
                           spec_.accumulation;
    if (spec_.device == DeviceKind::Cpu && devices * info.threads_per_device > info.cores)
        info.warnings.push_back(std::to_string(devices) + " devices x " +
                                std::to_string(info.threads_per_device) + " threads exceed the " +
                                std::to_string(info.cores) +
                                " cores: devices share cores, so throughput cannot scale");

    // Barriers may poll briefly only when every device thread has cores of its own.
    DeviceGroup group(devices, gpus_,
                      {.gpu = 0, .tf32 = spec_.tf32, .deterministic = spec_.deterministic},
                      spec_.collective_timeout_s, info.threads_per_device, spec_.sync_bn,
                      info.warnings.empty(), processes_);
    std::vector<RunEnd> ends(static_cast<std::size_t>(devices));
    DeviceThreads threads(group, spec_);
    threads.run(devices, [&](int local) {
        DeviceGroup::Rank devices_of_rank = group.rank(local);
        const int rank = process * devices + local;
        if (communicator_hook_)
            communicator_hook_(rank, devices_of_rank.comm());
        ends[std::size_t(local)] = run_device(run_spec, rank, devices_of_rank, info);
    });

    if (const auto& failure = threads.failure())
        return ended_early(RunStatus::Failed,
                           "device " + std::to_string(failure->rank) + ": " + failure->message);
    if (cancelled_.load()) {
        if (std::lock_guard lock(gone_mutex_); !gone_.empty())
            return ended_early(RunStatus::Failed, "communication aborted: " + gone_);
        // Released by the abort before it could end itself, rank 0 has no end of its own.
        RunEnd end = ends[0].message.empty() ? ended_early(RunStatus::Cancelled, "") : ends[0];
        end.status = RunStatus::Cancelled;
        if (end.message.empty())
            end.message = "stopped at step " + std::to_string(end.step);
        return end;
    }
    // Neither a device's failure nor a cancel: rank 0's end would be an empty, unfinished one.
    if (const auto& abort_reason = threads.abort_reason())
        return ended_early(RunStatus::Failed, "communication aborted: " + *abort_reason);
    return ends[0];
}

void Trainer::cancel() {
    if (!processes_ || processes_->count() == 1) {
        cancelled_.store(true, std::memory_order_relaxed);
        return;
    }
    // Launchers stop every process with SIGTERM both when the job is cancelled and when one of
    // its processes died: the roll call tells which. It comes before the abort (after that,
    // this process makes no MPI call; see MpiJob::mark_broken) and before the ranks learn of the
    // cancel (they would abort at their next step). Process 0 asks; the others wait longer than
    // it asks before they stop, so that they are there to answer.
    if (processes_->index() == 0) {
        if (const auto silent = processes_->silent_processes(roll_call_after_cancel);
            !silent.empty()) {
            std::lock_guard lock(gone_mutex_);
            gone_ = comm::gone_text(silent) + "; the launcher then stopped this process";
        }
    } else {
        std::this_thread::sleep_for(follower_waits_after_cancel);
    }
    cancelled_.store(true, std::memory_order_relaxed);
    processes_->abort("cancelled");
}

RunEnd Trainer::ended_early(RunStatus status, std::string message) const {
    return RunEnd{.status = status,
                  .message = std::move(message),
                  .step = steps_done_.load(),
                  .epoch = epoch_now_.load()};
}

RunEnd Trainer::run_device(const RunSpec& run_spec, int rank, DeviceGroup::Rank& devices_of_rank,
                           const RunInfo& info) {
    DeviceRun run(run_spec, data_, sink_, step_hook_, rank, devices_of_rank, info);
    const bool keeps_progress = rank % spec_.devices == 0;  // this process's first rank
    for (int epoch = 1; epoch <= spec_.epochs; ++epoch) {
        run.start_epoch(epoch);
        if (keeps_progress)
            epoch_now_.store(epoch);
        for (int step_in_epoch = 1; step_in_epoch <= info.steps_per_epoch; ++step_in_epoch) {
            if (cancelled_.load(std::memory_order_relaxed))
                return run.cancel(epoch);
            const TrainedStep step = run.train_step(epoch, step_in_epoch);
            if (keeps_progress)
                steps_done_.fetch_add(1);
            run.record_step(step);
            if (std::optional<RunEnd> end = run.stop_if_diverged(step))
                return *std::move(end);
        }
        const EvaluatedEpoch evaluated = run.evaluate(epoch);
        run.record_epoch(evaluated);
        if (std::optional<RunEnd> end = run.stop_if_target_held(evaluated))
            return *std::move(end);
    }
    return run.finish();
}

}  // namespace scalelab
