#include "train/replica.h"

#include <cmath>

#include "nn/model_zoo.h"
#include "optim/make_optimizer.h"

namespace scalelab {

namespace {

// A different dropout mask every step, and the same one for the same (seed, step).
std::uint64_t dropout_seed(std::uint64_t seed, std::int64_t step) {
    return (seed + 1) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(step) * 0xC2B2AE3D27D4EB4Full;
}

}  // namespace

Replica::Replica(const RunSpec& spec, Shape image, std::unique_ptr<Backend> backend)
    : spec_(spec),
      image_(image),
      backend_(std::move(backend)),
      model_(nn::build_model(spec.model, image.c, image.h, spec.width), image, *backend_,
             spec.seed),
      optimizer_(optim::make_optimizer(spec, model_.segments())),
      input_(backend_->allocate(std::size_t(spec.batch) * image.per_sample())) {}

Tensor Replica::upload(const data::Batch& batch) {
    const Shape shape{batch.size, image_.c, image_.h, image_.w};
    backend_->upload({batch.images.data(), shape.numel()}, input_.data());
    return Tensor{TensorDesc{shape, nullptr}, input_.data()};
}

SoftmaxCrossEntropyKernel& Replica::loss_for(const Tensor& logits) {
    return losses_.get(logits.shape(), [&] {
        return backend_->softmax_cross_entropy(logits.desc, float(spec_.label_smoothing));
    });
}

StepResult Replica::train_step(const data::Batch& batch, double lr, std::int64_t step) {
    const nn::Context ctx{*backend_, true, dropout_seed(spec_.seed, step)};

    // Forward: logits = model(x); loss = sum_i CE(logits_i, y_i).
    const Tensor logits = model_.forward(upload(batch), ctx);
    auto& loss = loss_for(logits);
    const LossResult r = loss.forward(logits, batch.labels);
    const StepResult result{r.loss_sum, r.correct, batch.size};
    if (!std::isfinite(r.loss_sum))
        return result;  // diverged: never train on

    // Backward of the mean loss: d(loss_sum / B) / d logits, then through every layer.
    model_.backward(loss.backward(1.0f / float(batch.size)), ctx);

    // Update: p <- optimiser(p, g, lr).
    optimizer_->step(model_.params(), model_.grads(), lr);
    return result;
}

StepResult Replica::evaluate(const data::Batch& batch) {
    const nn::Context ctx{*backend_, false, 0};
    const Tensor logits = model_.forward(upload(batch), ctx);
    const LossResult r = loss_for(logits).forward(logits, batch.labels);
    return StepResult{r.loss_sum, r.correct, batch.size};
}

}  // namespace scalelab
