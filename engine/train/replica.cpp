#include "train/replica.h"

#include <cmath>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "error.h"

#include "nn/model_zoo.h"

namespace scalelab {

namespace {

// A different dropout mask every step and device, and the same one for the same
// (seed, step, rank).
std::uint64_t dropout_seed(std::uint64_t seed, std::int64_t step, int rank) {
    return (seed + 1) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(step) * 0xC2B2AE3D27D4EB4Full ^
           std::uint64_t(rank) * 0x165667B19E3779F9ull;
}

}  // namespace

nn::Model build_run_model(const RunSpec& spec, Shape image, Backend& backend) {
    return nn::Model(nn::build_model(spec.model, image.c, image.h,
                                     {.width = spec.width,
                                      .zero_init_residual = spec.zero_init_residual,
                                      .ghost_batch = spec.ghost_batch}),
                     image, backend, spec.seed);
}

Replica::Replica(const RunSpec& spec, Shape image, std::unique_ptr<Backend> backend, int rank,
                 comm::Communicator* sync_bn)
    : spec_(spec),
      image_(image),
      backend_(std::move(backend)),
      model_(build_run_model(spec, image, *backend_)),
      optimizer_(backend_->optimizer(spec, model_.segments())),
      input_(backend_->input_stage(std::size_t(spec.batch) * image.per_sample())),
      rank_(rank),
      sync_bn_(sync_bn) {}

void Replica::stage(const data::Batch& batch) {
    const Shape shape{batch.size, image_.c, image_.h, image_.w};
    staged_input_ =
        Tensor{TensorDesc{shape, nullptr}, input_->stage({batch.images.data(), shape.numel()})};
    staged_batch_ = &batch;
}

Tensor Replica::upload(const data::Batch& batch) {
    if (staged_batch_ != &batch)
        stage(batch);
    staged_batch_ = nullptr;  // the next batch's stage may take this memory
    return staged_input_;
}

SoftmaxCrossEntropyKernel& Replica::loss_for(const Tensor& logits) {
    return losses_.get(logits.shape(), [&] {
        return backend_->softmax_cross_entropy(logits.desc, float(spec_.label_smoothing));
    });
}

void Replica::forward(const data::Batch& batch, std::int64_t step) {
    dropout_seed_ = dropout_seed(spec_.seed, step, rank_);
    const nn::Context ctx{*backend_, true, dropout_seed_, {}, sync_bn_};
    // logits = model(x); loss = sum_i CE(logits_i, y_i).
    give_loss(model_.forward(upload(batch), ctx), batch);
}

void Replica::give_loss(const Tensor& logits, const data::Batch& batch) {
    loss_for(logits).forward(logits, batch.labels);
    forward_size_ = batch.size;
}

StepResult Replica::result() {
    const int size = std::exchange(forward_size_, 0);
    if (size == 0)
        throw Error(ErrorKind::Internal,
                    "a replica's result was asked for before its forward or evaluate");
    const LossResult r = losses_.last().result();
    return StepResult{r.loss_sum, r.correct, size};
}

void Replica::backward(float grad_scale, std::function<void(const float*)> on_written) {
    const nn::Context ctx{.backend = *backend_,
                          .training = true,
                          .dropout_seed = dropout_seed_,
                          .on_gradients_written = std::move(on_written),
                          .sync_bn = sync_bn_};
    // d(loss_sum * grad_scale) / d logits, then through every layer down to the first.
    model_.backward(losses_.last().backward(grad_scale), ctx);
}

void Replica::update(double lr) {
    optimizer_->step(model_.params(), model_.grads(), lr);
}

void Replica::evaluate(const data::Batch& batch) {
    const nn::Context ctx{.backend = *backend_,
                          .training = false,
                          .dropout_seed = 0,
                          .on_gradients_written = {},
                          .sync_bn = nullptr};
    give_loss(model_.forward(upload(batch), ctx), batch);
}

void Replica::prepare(std::span<const int> train_sizes, std::span<const int> eval_sizes) {
    for (std::span<const int> sizes : {train_sizes, eval_sizes})
        for (int size : sizes)
            if (size < 1 || size > spec_.batch)
                throw Error(ErrorKind::Internal,
                            "a replica was prepared for batches of " + std::to_string(size) +
                                " samples; its input holds 1 to " + std::to_string(spec_.batch));
    const std::span<float> state = model_.state();
    std::vector<float> saved_state(state.size());
    if (!state.empty())
        backend_->download(state.data(), saved_state);

    data::Batch zeros;
    const auto batch_of = [&](int size) -> const data::Batch& {
        zeros.size = size;
        zeros.images.assign(std::size_t(size) * image_.per_sample(), 0.0f);
        zeros.labels.assign(std::size_t(size), 0);
        return zeros;
    };
    for (int size : std::set<int>(train_sizes.begin(), train_sizes.end())) {
        forward(batch_of(size), 0);
        backward(1.0f / float(size));
        result();  // so that no loss is left pending
    }
    for (int size : std::set<int>(eval_sizes.begin(), eval_sizes.end())) {
        evaluate(batch_of(size));
        result();
    }

    if (!state.empty())
        backend_->upload(saved_state, state.data());
    // Returns with all this work done. On a GPU the collective that comes next (the broadcast
    // of the initial parameters, DeviceWorker::broadcast_initial_state) runs on a stream that
    // does not wait for this one, and would overwrite parameters that the last backward may
    // still be reading: result() waited for the loss only, and upload() is skipped without
    // running statistics.
    const std::unique_ptr<Fence> done = backend_->make_fence();
    done->mark();
    done->wait();
}

}  // namespace scalelab
