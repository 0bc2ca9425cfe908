#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "backend/backend.h"
#include "comm/communicator.h"
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

// The run's model on `backend`, initialised from spec.seed: every replica's starting point (the
// values depend only on the seed, not on the backend), and what --save-initial writes.
nn::Model build_run_model(const RunSpec& spec, Shape image, Backend& backend);

// One device's copy of the model: its backend, parameters, optimiser state and loss. The three
// phases of a training step are separate calls so that the data-parallel worker can put the
// gradient all-reduce between them. Construct and use it on one thread (see Backend).
class Replica {
  public:
    // image: the shape of one input sample (n is ignored). rank: this device's place in the
    // data-parallel group (each device draws its own dropout masks). sync_bn: the group whose
    // global batch the batch-norm statistics of training are taken over (its own, not the
    // gradient reducer's: see nn::Context); null for per-device statistics.
    Replica(const RunSpec& spec, Shape image, std::unique_ptr<Backend> backend, int rank = 0,
            comm::Communicator* sync_bn = nullptr);

    // Starts copying the batch's images to the backend's memory now, for the forward that
    // trains on it next: on a GPU the copy then runs beside the work already given (see
    // InputStage), such as the last step's optimiser. The batch must stay as it is until that
    // forward, which the copy serves alone: a later forward of the same object (a loader refills
    // it) copies it anew. Any other batch's upload in between (a forward or evaluate of another
    // batch, prepare) takes the stage's memory back, and the batch is copied again when it comes.
    void stage(const data::Batch& batch);
    // Training forward and loss of one (micro-)batch, the one staged last if it is this one,
    // else uploaded now, given to the backend: result() has the loss.
    void forward(const data::Batch& batch, std::int64_t step);
    // The loss sum, correct predictions and size of the last forward or evaluate. On a GPU it
    // waits for those numbers only, not for the work given since: a step asks once its backward
    // is given, an evaluation once the next batch is staged, and the GPU goes on with that.
    // Throws Error(Internal) when no forward or evaluate came since the last result().
    StepResult result();
    // Gradients of loss_sum * grad_scale from the last forward, written into model().grads();
    // on_written is told as each layer's gradients are final (see nn::Context).
    void backward(float grad_scale, std::function<void(const float*)> on_written = {});
    // p <- optimiser(p, g, lr) with the gradients now in model().grads().
    void update(double lr);

    // Forward in inference mode (running batch-norm statistics, no dropout) and loss of one
    // batch, the one staged last if it is this one, given to the backend: result() has the loss
    // and the correct predictions.
    void evaluate(const data::Batch& batch);

    // Makes now every kernel, and so all the backend memory, that training on batches of
    // `train_sizes` samples and evaluating batches of `eval_sizes` will use: one training forward
    // and backward and one evaluation forward of zeros at each size, after which the batch-norm
    // running statistics are put back. Parameters and optimiser state are not touched; the
    // gradients are left written, as every backward overwrites them (nn::Model::backward).
    // Returns once the backend has done all this work, so that a collective may write the
    // parameters next.
    //
    // Why: a layer makes its kernel the first time it sees a shape (nn::KernelCache) and a GPU
    // kernel allocates its memory then. cudaMalloc takes the device's page-table lock, which a
    // rank's thread may hold while it waits for a collective that needs this rank: a GPU run must
    // allocate nothing once its collectives start (see DeviceRun in train/trainer.cpp).
    //
    // Every rank of a run passes the same train_sizes: synchronised batch norm's collectives run
    // in the training forward and backward. Throws Error(Internal) for a size outside
    // [1, spec.batch] (the input buffer holds spec.batch samples).
    void prepare(std::span<const int> train_sizes, std::span<const int> eval_sizes);

    nn::Model& model() { return model_; }
    Backend& backend() { return *backend_; }

  private:
    // The batch's images in the backend's memory: where stage() put them, or copied now.
    Tensor upload(const data::Batch& batch);
    SoftmaxCrossEntropyKernel& loss_for(const Tensor& logits);
    // Gives the backend the loss of `logits` against the batch's labels, for result().
    void give_loss(const Tensor& logits, const data::Batch& batch);

    RunSpec spec_;
    Shape image_;
    std::unique_ptr<Backend> backend_;
    nn::Model model_;
    std::unique_ptr<optim::Optimizer> optimizer_;
    std::unique_ptr<InputStage> input_;  // holds spec.batch samples
    // The batch stage() copied and where it went; null once an upload used or replaced it.
    const data::Batch* staged_batch_ = nullptr;
    Tensor staged_input_;
    nn::KernelCache<SoftmaxCrossEntropyKernel> losses_;
    int rank_;
    comm::Communicator* sync_bn_;
    std::uint64_t dropout_seed_ = 0;  // of the last forward, for its backward
    int forward_size_ = 0;            // of the last forward or evaluate, until its result()
};

}  // namespace scalelab
