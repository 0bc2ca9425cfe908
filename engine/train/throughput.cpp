#include "train/throughput.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "data/load.h"
#include "error.h"
#include "train/device_group.h"
#include "train/device_threads.h"
#include "train/device_worker.h"

namespace scalelab {

namespace {

using Clock = std::chrono::steady_clock;

// Batches sliced from a shuffled dataset, prepared before the clock starts (as the PyTorch
// anchor slices pre-shuffled tensors), so that only the training step is timed.
std::vector<data::Batch> prepared_batches(const ThroughputConfig& cfg, int count) {
    data::SyntheticConfig synth;
    synth.train = cfg.batch * count;
    synth.test = 1;
    synth.channels = cfg.channels;
    synth.size = cfg.image_size;
    const data::TrainTest data = data::make_synthetic(synth);
    const data::Normalization norm = data::channel_statistics(data.train);
    data::BatchLoader loader(data.train, norm,
                             {.batch = cfg.batch,
                              .drop_last = true,
                              .augment = data::AugmentMode::None,
                              .prefetch = 1,
                              .seed = 0});
    std::vector<std::uint32_t> order(data.train.count());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = std::uint32_t(i);
    loader.start_epoch(std::move(order), 0);
    std::vector<data::Batch> batches;
    while (const data::Batch* b = loader.next())
        batches.push_back(*b);
    return batches;
}

// The parts of `steps` steps' summed times, per step.
DeviceStepTimes per_step(const DeviceStepTimes& sum, int steps) {
    const double n = steps;
    return {.data = sum.data / n,
            .forward = sum.forward / n,
            .backward = sum.backward / n,
            .exposed_comm = sum.exposed_comm / n,
            .wait = sum.wait / n,
            .optimizer = sum.optimizer / n,
            .allreduce = {},
            .between_processes = sum.between_processes / n};
}

}  // namespace

ThroughputResult measure_training_throughput(const ThroughputConfig& cfg) {
    if (cfg.batch < 1 || cfg.threads < 1 || cfg.devices < 1 || cfg.windows < 1 ||
        cfg.images_per_window < 1 || cfg.warmup_steps < 0)
        throw Error(ErrorKind::InvalidSpec,
                    "bench train needs a positive batch, thread count, device count, window count "
                    "and images per window");
    RunSpec spec;
    spec.model = cfg.model;
    spec.width = cfg.width;
    spec.batch = cfg.batch;
    spec.threads = cfg.threads;
    spec.devices = cfg.devices;
    spec.sync_bn = cfg.sync_bn;
    if (!cfg.gpus.empty()) {
        spec.device = DeviceKind::Gpu;
        spec.gpus = cfg.gpus;
    }
    if (auto problems = spec.validate(); !problems.empty())
        throw Error(ErrorKind::InvalidSpec, problems.front());

    const int steps = std::max(8, (cfg.images_per_window + cfg.batch - 1) / cfg.batch);
    const auto batches = prepared_batches(cfg, std::min(steps, 8) * cfg.devices);
    const Shape image{1, cfg.channels, cfg.image_size, cfg.image_size};

    const int processes = cfg.processes ? cfg.processes->count() : 1;
    // Barriers may poll briefly only when every device thread has cores of its own.
    const bool spin = cfg.devices * cfg.threads <= cpu::available_cores();
    DeviceGroup group(cfg.devices, cfg.gpus, GpuBackendOptions{}, spec.collective_timeout_s,
                      cfg.threads, spec.sync_bn, spin, cfg.processes);
    std::vector<double> rates;
    double flops_per_image = 0;
    DeviceStepTimes mean_step;
    DeviceThreads threads(group, spec);
    threads.run(cfg.devices, [&](int rank) {
        DeviceGroup::Rank devices_of_rank = group.rank(rank);
        comm::Communicator& host = *devices_of_rank.host;
        if (cfg.communicator_hook)
            cfg.communicator_hook(rank, devices_of_rank.comm());
        DeviceWorker worker(spec, image, std::move(devices_of_rank.backend), devices_of_rank.comm(),
                            devices_of_rank.sync_bn.get(), &host);
        if (spec.device == DeviceKind::Gpu)  // as the trainer's DeviceRun
            worker.prepare(std::vector<int>{cfg.batch}, {});
        worker.broadcast_initial_state();
        // The anchor's protocol: SGD with momentum; warm-up steps excluded, then timed
        // windows, each between two barriers so that it covers every device's steps.
        // Each device's batches in turn; a step fetches the next step's ahead, as in a
        // run, except the last step of all.
        std::size_t fetched = 0;
        const auto next_batch = [&] {
            return &batches[(fetched++ * std::size_t(cfg.devices) + std::size_t(rank)) %
                            batches.size()];
        };
        const std::int64_t total_steps =
            std::int64_t(cfg.warmup_steps) + std::int64_t(cfg.windows) * steps;
        std::int64_t step = 0;
        // train_step adds each part's time to `times`.
        auto train_one = [&](DeviceStepTimes& times) {
            const NextWork next = step + 1 < total_steps ? NextWork::TrainStep : NextWork::Other;
            worker.train_step(next_batch, 1, cfg.batch, spec.lr, step, times, next);
            ++step;
        };
        DeviceStepTimes warmup, timed;
        for (int i = 0; i < cfg.warmup_steps; ++i)
            train_one(warmup);
        for (int w = 0; w < cfg.windows; ++w) {
            host.barrier();
            const auto start = Clock::now();
            for (int i = 0; i < steps; ++i)
                train_one(timed);
            host.barrier();
            const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
            if (rank == 0)
                rates.push_back(double(steps) * cfg.batch * cfg.devices * processes / seconds);
        }
        if (rank == 0) {
            flops_per_image = worker.replica().model().forward_flops_per_sample();
            mean_step = per_step(timed, steps * cfg.windows);
        }
    });
    if (const auto& failure = threads.failure())
        failure->rethrow();
    if (const auto& abort_reason = threads.abort_reason())
        throw Error(ErrorKind::Internal, "the benchmark's devices stopped: " + *abort_reason);

    std::sort(rates.begin(), rates.end());
    ThroughputResult result;
    result.images_per_s_min = rates.front();
    result.images_per_s_max = rates.back();
    result.images_per_s_median = rates[rates.size() / 2];
    // Forward once, backward twice (gradients of inputs and of weights).
    result.flops_per_image = 3.0 * flops_per_image;
    result.gflops = result.images_per_s_median * result.flops_per_image / 1e9;
    result.step = mean_step;
    return result;
}

}  // namespace scalelab
