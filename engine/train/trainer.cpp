#include "train/trainer.h"

#include <chrono>
#include <cmath>
#include <sstream>

#include "backend/cpu/cpu_backend.h"
#include "data/sampler.h"
#include "error.h"
#include "optim/lr_schedule.h"
#include "train/replica.h"

namespace scalelab {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

struct Totals {
    double loss_sum = 0;
    std::int64_t correct = 0;
    std::int64_t count = 0;

    void add(const StepResult& r) {
        loss_sum += r.loss_sum;
        correct += r.correct;
        count += r.size;
    }
    double loss() const { return count ? loss_sum / double(count) : 0.0; }
    double accuracy() const { return count ? double(correct) / double(count) : 0.0; }
};

Totals evaluate(Replica& replica, data::BatchLoader& loader, std::size_t count) {
    std::vector<std::uint32_t> all(count);
    for (std::size_t i = 0; i < count; ++i)
        all[i] = std::uint32_t(i);
    loader.start_epoch(std::move(all), 0);
    Totals totals;
    while (const data::Batch* batch = loader.next())
        totals.add(replica.evaluate(*batch));
    return totals;
}

}  // namespace

Trainer::Trainer(RunSpec spec, const data::TrainTest& data, MetricsSink& sink)
    : spec_(std::move(spec)), data_(data), sink_(sink) {
    std::vector<std::string> problems = spec_.validate();
    const auto& train = data_.train;
    if (train.count() == 0 || data_.test.count() == 0)
        problems.push_back("the dataset has no training or no test images");
    if (train.height != train.width || train.height % 4 != 0 ||
        (train.channels != 1 && train.channels != 3))
        problems.push_back(
            "the models take square 1- or 3-channel images whose side is a "
            "multiple of 4; this dataset's are " +
            std::to_string(train.channels) + "x" + std::to_string(train.height) + "x" +
            std::to_string(train.width));
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
        end = RunEnd{RunStatus::Failed, e.what(), 0, 0};
    }
    sink_.on_end(end);
    return end;
}

RunEnd Trainer::train() {
    const auto& train = data_.train;
    const Shape image{1, train.channels, train.height, train.width};
    Replica replica(spec_, image, std::make_unique<cpu::CpuBackend>(spec_.threads));

    const data::Normalization norm = data::channel_statistics(train);
    data::BatchLoader loader(train, norm, {spec_.batch, false, spec_.augment, 2, spec_.seed});
    data::BatchLoader eval_loader(data_.test, norm, {spec_.batch, false, false, 2, spec_.seed});
    const data::EpochSampler sampler(train.count(), spec_.seed);
    const int steps_per_epoch = data::batch_count(sampler.per_rank(), spec_.batch, false);
    const optim::LrSchedule schedule(spec_, steps_per_epoch);

    std::int64_t step = 0;
    int epochs_at_target = 0;
    for (int epoch = 1; epoch <= spec_.epochs; ++epoch) {
        loader.start_epoch(sampler.indices(epoch - 1), epoch);
        Totals epoch_totals;
        const auto epoch_start = Clock::now();
        int step_in_epoch = 0;
        auto step_start = Clock::now();
        while (const data::Batch* batch = loader.next()) {
            if (cancelled_.load(std::memory_order_relaxed))
                return RunEnd{RunStatus::Cancelled, "cancelled at step " + std::to_string(step),
                              step, epoch};
            const double lr = schedule.lr(step);
            ++step;
            ++step_in_epoch;
            const StepResult r = replica.train_step(*batch, lr, step);
            const double elapsed = seconds_since(step_start);
            step_start = Clock::now();
            sink_.on_step(StepMetrics{step, epoch, step_in_epoch, steps_per_epoch, r.mean_loss(),
                                      double(r.correct) / r.size, lr, r.size / elapsed});
            if (!std::isfinite(r.loss_sum)) {
                std::ostringstream msg;
                msg << "the loss became " << r.mean_loss() << " at step " << step << " (epoch "
                    << epoch << ", lr " << lr << "): lower the learning rate or add warm-up";
                return RunEnd{RunStatus::Diverged, msg.str(), step, epoch};
            }
            epoch_totals.add(r);
        }
        const double epoch_seconds = seconds_since(epoch_start);
        const Totals val = evaluate(replica, eval_loader, data_.test.count());
        sink_.on_epoch(EpochMetrics{epoch, step, epoch_totals.loss(), epoch_totals.accuracy(),
                                    val.loss(), val.accuracy(), epoch_seconds,
                                    double(epoch_totals.count) / epoch_seconds});

        epochs_at_target = val.accuracy() >= spec_.target_accuracy ? epochs_at_target + 1 : 0;
        if (spec_.target_accuracy > 0 && epochs_at_target >= spec_.patience) {
            std::ostringstream msg;
            msg << "validation accuracy reached " << spec_.target_accuracy << " for "
                << spec_.patience << " consecutive epoch(s) at epoch " << epoch;
            return RunEnd{RunStatus::ReachedTarget, msg.str(), step, epoch};
        }
    }
    return RunEnd{RunStatus::Finished, "trained " + std::to_string(spec_.epochs) + " epochs", step,
                  spec_.epochs};
}

}  // namespace scalelab
