#pragma once

#include <cstdint>
#include <memory>

#include "backend/backend.h"
#include "data/batch_loader.h"
#include "nn/model.h"
#include "optim/optimizer.h"
#include "train/run_spec.h"

namespace scalelab {

struct StepResult {
    double loss_sum = 0;  // summed over the batch
    int correct = 0;
    int size = 0;

    double mean_loss() const { return size > 0 ? loss_sum / size : 0.0; }
};

// One device's copy of the model: its backend, parameters, optimiser state and loss, and the
// code of one training step. Construct and use it on one thread (see Backend).
class Replica {
  public:
    // image: the shape of one input sample (n is ignored).
    Replica(const RunSpec& spec, Shape image, std::unique_ptr<Backend> backend);

    // forward, loss, backward, optimiser update. When the loss is not finite the parameters
    // are left untouched and the result carries the non-finite loss (the caller ends the run).
    StepResult train_step(const data::Batch& batch, double lr, std::int64_t step);

    // forward in inference mode (running batch-norm statistics, no dropout), loss and accuracy.
    StepResult evaluate(const data::Batch& batch);

    nn::Model& model() { return model_; }
    Backend& backend() { return *backend_; }

  private:
    Tensor upload(const data::Batch& batch);
    SoftmaxCrossEntropyKernel& loss_for(const Tensor& logits);

    RunSpec spec_;
    Shape image_;
    std::unique_ptr<Backend> backend_;
    nn::Model model_;
    std::unique_ptr<optim::Optimizer> optimizer_;
    DeviceBuffer input_;
    nn::KernelCache<SoftmaxCrossEntropyKernel> losses_;
};

}  // namespace scalelab
