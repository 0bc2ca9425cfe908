#include "train/device_worker.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <utility>

#include "error.h"
#include "nn/model_zoo.h"

namespace scalelab {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<Bucket> buckets_for(const nn::Model& model, const RunSpec& spec) {
    std::vector<std::size_t> ends;
    for (const auto& s : model.segments())
        ends.push_back(s.offset + s.size);
    return plan_buckets(ends, std::size_t(spec.first_bucket_mb * (1 << 20)),
                        std::size_t(spec.bucket_mb * (1 << 20)));
}

constexpr std::size_t kTimeFields = 7;

// The group synchronised batch norm uses: none with one device (its statistics are already
// those of the global batch) or without sync_bn.
comm::Communicator* sync_bn_group(const RunSpec& spec, const comm::Communicator& comm,
                                  comm::Communicator* sync_bn) {
    if (!spec.sync_bn || comm.size() == 1)
        return nullptr;
    if (sync_bn == nullptr || sync_bn == &comm || sync_bn->size() != comm.size() ||
        sync_bn->rank() != comm.rank())
        throw Error(ErrorKind::Internal,
                    "sync_bn needs a second communicator group of the same ranks as the "
                    "gradient all-reduce");
    return sync_bn;
}

}  // namespace

DeviceWorker::DeviceWorker(const RunSpec& spec, Shape image, std::unique_ptr<Backend> backend,
                           comm::Communicator& comm, comm::Communicator* sync_bn,
                           comm::Communicator* host_comm)
    : comm_(comm),
      host_comm_(host_comm != nullptr ? *host_comm : comm),
      replica_(spec, image, std::move(backend), comm.rank(), sync_bn_group(spec, comm, sync_bn)),
      reducer_(replica_.backend(), comm, replica_.model().grads(),
               buckets_for(replica_.model(), spec), spec.overlap && comm.size() > 1),
      // A step's phase ends: data, forward and backward per micro-batch, then exposed_comm,
      // wait, optimizer and the next step's data.
      timeline_(replica_.backend(), 3 * std::size_t(std::max(1, spec.accumulation)) + 4) {
    if (spec.accumulation > 1)
        accumulated_ = replica_.backend().allocate(replica_.model().grads().size());
    noise_ = NoiseScaleEstimator(spec.noise_scale_beta);
}

double DeviceWorker::squared_norm(std::span<const float> v) {
    Backend& backend = replica_.backend();
    backend.accumulate_squared_norm(v);
    return backend.take_squared_norm();
}

void DeviceWorker::prepare(std::span<const int> train_sizes, std::span<const int> eval_sizes) {
    replica_.prepare(train_sizes, eval_sizes);
    host_comm_.barrier();
}

void DeviceWorker::broadcast_initial_state() {
    comm_.broadcast(replica_.model().params(), 0);
    comm_.broadcast(replica_.model().state(), 0);
}

GlobalTotals DeviceWorker::train_step(const std::function<const data::Batch*()>& next_batch,
                                      int micro_batches, int samples, double lr, std::int64_t step,
                                      DeviceStepTimes& times, NextWork next) {
    // The buckets' spans count from step_start, the phases from the timeline's start: marked
    // first, so that on the CPU (where both are the host clock) no span ends after the phase
    // that waited for it.
    timeline_.start();
    const auto step_start = Clock::now();
    const double between_before = seconds_between_processes();
    StepResult local;
    const auto grads = replica_.model().grads();
    noise_.start_step(comm_.size(), micro_batches, samples);
    for (int i = 0; i < micro_batches; ++i) {
        const data::Batch* batch = i == 0 && fetched_ahead_ != nullptr
                                       ? std::exchange(fetched_ahead_, nullptr)
                                       : fetch(next_batch);
        timeline_.end(&DeviceStepTimes::data);
        replica_.forward(*batch, step);
        timeline_.end(&DeviceStepTimes::forward);

        const bool last = i + 1 == micro_batches;
        if (last) {
            reducer_.begin(accumulated_.size() == 0 || micro_batches == 1
                               ? std::span<const float>{}
                               : std::span<const float>(accumulated_.span()),
                           step_start);
            replica_.backward(1.0f / float(samples),
                              [this](const float* end) { reducer_.gradients_written(end); });
        } else {
            replica_.backward(1.0f / float(samples));
        }
        // The loss, asked for once backward is given: on a GPU this waits for the forward's
        // numbers while backward runs on, where asking before backward would leave the GPU idle
        // until the host had them and gave it backward.
        const StepResult r = replica_.result();
        local.loss_sum += r.loss_sum;
        local.correct += r.correct;
        local.size += r.size;
        if (noise_.reads_micro_batch(last))
            noise_.add_micro_batch(squared_norm(grads), r.size);
        if (!last) {
            if (i == 0)
                replica_.backend().copy(grads, accumulated_.span());
            else
                replica_.backend().add_to(grads, accumulated_.span());
        }
        timeline_.end(&DeviceStepTimes::backward);
    }
    // Returns once the last bucket's all-reduce is under way; the backend's work from here on
    // (the optimiser) follows it without the host waiting (on a GPU, the stream waits).
    reducer_.finish();
    timeline_.end(&DeviceStepTimes::exposed_comm);

    float small_sq_sum = 0;
    GlobalTotals totals = all_reduce_totals(
        local, noise_.local_small_squared_norm(reducer_.local_squared_norm()), &small_sq_sum);
    timeline_.end(&DeviceStepTimes::wait);
    // A step whose global loss is not finite (diverged) ends here on every rank: none trains on.
    if (std::isfinite(totals.loss_sum)) {
        // |G_big|^2, of the averaged gradient (the same on every rank), is summed before the
        // update and read after it, so that the update is enqueued without waiting for the
        // all-reduce.
        const bool estimate = noise_.reads_big_squared_norm(totals.count);
        if (estimate)
            replica_.backend().accumulate_squared_norm(grads);
        replica_.update(lr);
        timeline_.end(&DeviceStepTimes::optimizer);
        if (estimate)
            noise_.finish_step(small_sq_sum, replica_.backend().take_squared_norm(), totals.count);
        totals.noise_scale = noise_.b_simple();
    }
    if (next == NextWork::TrainStep) {
        fetched_ahead_ = fetch(next_batch);
        replica_.stage(*fetched_ahead_);
        timeline_.end(&DeviceStepTimes::data);
    }
    timeline_.add_to(times);
    // Throws the step's communication error, if any. On a GPU the update above was enqueued
    // before the host knew that the last all-reduce completed: after an abort it may have run on
    // what the aborted kernels left. That error ends the run on every rank, and a run keeps no
    // parameters past its end (no checkpoint), so no result ever depends on that update.
    reducer_.complete();
    const auto spans = reducer_.spans();
    times.allreduce.assign(spans.begin(), spans.end());
    times.between_processes += seconds_between_processes() - between_before;
    return totals;
}

double DeviceWorker::seconds_between_processes() const {
    return comm_.seconds_between_processes() +
           (&host_comm_ != &comm_ ? host_comm_.seconds_between_processes() : 0.0);
}

const data::Batch* DeviceWorker::fetch(const std::function<const data::Batch*()>& next_batch) {
    const data::Batch* batch = next_batch();
    if (batch == nullptr)
        throw Error(ErrorKind::Internal,
                    "a training step found no batch left: the caller asked for more steps or "
                    "micro-batches than its batch source holds");
    return batch;
}

GlobalTotals DeviceWorker::all_reduce_totals(const StepResult& local, float extra,
                                             float* extra_sum) {
    float sums[4] = {float(local.loss_sum), float(local.correct), float(local.size), extra};
    host_comm_.all_reduce(sums, comm::ReduceOp::Sum);
    if (extra_sum)
        *extra_sum = sums[3];
    return GlobalTotals{.loss_sum = sums[0], .correct = sums[1], .count = sums[2]};
}

GlobalTotals DeviceWorker::evaluate(data::BatchLoader& loader, std::vector<std::uint32_t> indices) {
    comm_.all_reduce(replica_.model().state(), comm::ReduceOp::Average);
    loader.start_epoch(std::move(indices), 0);
    StepResult local;
    const data::Batch* batch = loader.next();
    while (batch != nullptr) {
        replica_.evaluate(*batch);
        // The next batch is fetched and staged before this one's loss is asked for: on a GPU its
        // copy then runs beside this batch's forward, and the GPU has it when the host, once it
        // has the loss, gives the next forward. The loader's refill of this batch's object is
        // safe: evaluate() copied its images and labels before it returned (InputStage, loss).
        const data::Batch* next = loader.next();
        if (next != nullptr)
            replica_.stage(*next);
        const StepResult r = replica_.result();
        batch = next;
        local.loss_sum += r.loss_sum;
        local.correct += r.correct;
        local.size += r.size;
    }
    return all_reduce_totals(local);
}

std::vector<DeviceStepTimes> DeviceWorker::gather_times(const DeviceStepTimes& mine) {
    // Every rank sends kTimeFields + 2 * buckets floats. The all-gather needs the same count
    // from every rank, and it is: every rank plans its buckets from the same model and spec
    // (which also keeps the gradient all-reduces matched), and train_step reports one span per
    // bucket, or none with one device.
    const std::size_t buckets = reducer_.spans().size();
    if (mine.allreduce.size() != buckets)
        throw Error(ErrorKind::Internal,
                    "step times with " + std::to_string(mine.allreduce.size()) +
                        " all-reduce spans gathered where the bucket plan has " +
                        std::to_string(buckets) + ": gather the times train_step filled");
    const std::size_t fields = kTimeFields + 2 * buckets;
    gather_in_.assign({float(mine.data), float(mine.forward), float(mine.backward),
                       float(mine.exposed_comm), float(mine.wait), float(mine.optimizer),
                       float(mine.between_processes)});
    for (const BucketSpan& span : mine.allreduce) {
        gather_in_.push_back(float(span.start));
        gather_in_.push_back(float(span.end));
    }
    gather_out_.resize(std::size_t(comm_.size()) * fields);
    host_comm_.all_gather(gather_in_, gather_out_);
    std::vector<DeviceStepTimes> out(std::size_t(comm_.size()));
    for (std::size_t r = 0; r < out.size(); ++r) {
        const float* t = gather_out_.data() + r * fields;
        out[r] = DeviceStepTimes{.data = t[0],
                                 .forward = t[1],
                                 .backward = t[2],
                                 .exposed_comm = t[3],
                                 .wait = t[4],
                                 .optimizer = t[5],
                                 .between_processes = t[6]};
        out[r].allreduce.resize(buckets);
        for (std::size_t b = 0; b < buckets; ++b)
            out[r].allreduce[b] = {t[kTimeFields + 2 * b], t[kTimeFields + 2 * b + 1]};
    }
    return out;
}

}  // namespace scalelab
