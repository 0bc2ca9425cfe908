#include "train/throughput.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "data/load.h"
#include "error.h"
#include "train/replica.h"

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
    data::BatchLoader loader(data.train, norm, {cfg.batch, true, false, 1, 0});
    std::vector<std::uint32_t> order(data.train.count());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = std::uint32_t(i);
    loader.start_epoch(std::move(order), 0);
    std::vector<data::Batch> batches;
    while (const data::Batch* b = loader.next())
        batches.push_back(*b);
    return batches;
}

}  // namespace

ThroughputResult measure_training_throughput(const ThroughputConfig& cfg) {
    if (cfg.batch < 1 || cfg.threads < 1 || cfg.windows < 1 || cfg.images_per_window < 1 ||
        cfg.warmup_steps < 0)
        throw Error(ErrorKind::InvalidSpec,
                    "bench train needs a positive batch, thread count, window count and images "
                    "per window");
    RunSpec spec;
    spec.model = cfg.model;
    spec.width = cfg.width;
    spec.batch = cfg.batch;
    spec.threads = cfg.threads;
    if (auto problems = spec.validate(); !problems.empty())
        throw Error(ErrorKind::InvalidSpec, problems.front());

    const int steps = std::max(8, (cfg.images_per_window + cfg.batch - 1) / cfg.batch);
    const auto batches = prepared_batches(cfg, std::min(steps, 8));
    Replica replica(spec, Shape{1, cfg.channels, cfg.image_size, cfg.image_size},
                    std::make_unique<cpu::CpuBackend>(cfg.threads));

    // The anchor's protocol: SGD with momentum; warm-up steps excluded, then timed windows.
    std::int64_t step = 0;
    auto train_one = [&] {
        replica.train_step(batches[std::size_t(step) % batches.size()], spec.lr, step);
        ++step;
    };
    for (int i = 0; i < cfg.warmup_steps; ++i)
        train_one();
    std::vector<double> rates;
    for (int w = 0; w < cfg.windows; ++w) {
        const auto start = Clock::now();
        for (int i = 0; i < steps; ++i)
            train_one();
        const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
        rates.push_back(double(steps) * cfg.batch / seconds);
    }
    std::sort(rates.begin(), rates.end());
    ThroughputResult result;
    result.images_per_s_min = rates.front();
    result.images_per_s_max = rates.back();
    result.images_per_s_median = rates[rates.size() / 2];
    // Forward once, backward twice (gradients of inputs and of weights).
    result.flops_per_image = 3.0 * replica.model().forward_flops_per_sample();
    result.gflops = result.images_per_s_median * result.flops_per_image / 1e9;
    return result;
}

}  // namespace scalelab
