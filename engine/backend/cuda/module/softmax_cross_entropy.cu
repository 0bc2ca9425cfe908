// Softmax cross-entropy on the GPU, the CPU backend's arithmetic (cpu/softmax_cross_entropy.cpp):
// with label smoothing s over K classes, per sample i
//   t_j = (1 - s) [j == label] + s / K,   p = softmax(z)
//   loss_i = logsumexp(z) - sum_j t_j z_j,   d loss_i / d z_j = p_j - t_j
// with the max subtracted for stability and the sums in double. One block per sample computes
// p, loss_i and the arg-max; the host adds the losses in sample order (as the CPU does) and
// counts the correct predictions.
//
// forward() only enqueues: the labels go to the GPU and the losses and predictions come back
// through pinned host memory, by asynchronous copies, and an event recorded after the copy back
// tells result() when they are there. A step enqueues its backward before it asks (see
// DeviceWorker::train_step), so the GPU goes on with backward while the host adds the losses.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "backend/cuda/cuda_error.h"
#include "backend/cuda/module/block_reduce.cuh"
#include "backend/cuda/module/gpu_kernels.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

struct Max {
    __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};

struct Min {
    __device__ int operator()(int a, int b) const { return a < b ? a : b; }
};

// The smoothed target of class j for a sample labelled `label`, in float as the CPU has it. A
// label outside 0 .. K - 1 matches no class (target s / K everywhere, never counted correct),
// as on the CPU, which does not check labels either.
__device__ float smoothed_target(int j, int label, float smoothing, float off) {
    return (j == label ? 1.0f - smoothing : 0.0f) + off;
}

// Block i: prob row i = softmax(z_i), loss[i] = log sum exp(z - zmax) - sum t_j (z_j - zmax)
// (= logsumexp(z) - sum t_j z_j, since sum t_j = 1) and prediction[i] = the first index of the
// largest logit, std::max_element's choice on the CPU. With NaN logits that is 0 when z_0 is NaN
// (every comparison with it is false) and else the first largest of the others (fmaxf passes
// over NaN as std::max_element's comparisons do).
__global__ void softmax_cross_entropy_forward(const float* logits, const std::int32_t* labels,
                                              int classes, float smoothing, float* prob,
                                              double* loss, std::int32_t* prediction) {
    const std::size_t row = std::size_t(blockIdx.x) * classes;
    const float* z = logits + row;
    float* p = prob + row;
    const int label = labels[blockIdx.x];
    const float off = smoothing / float(classes);

    float zmax = -INFINITY;
    for (int j = threadIdx.x; j < classes; j += blockDim.x)
        zmax = fmaxf(zmax, z[j]);
    zmax = block_fold(zmax, -INFINITY, Max{});
    int first_max = classes;
    for (int j = threadIdx.x; j < classes; j += blockDim.x)
        if (z[j] == zmax && j < first_max)
            first_max = j;
    first_max = block_fold(first_max, classes, Min{});

    double sum = 0, dot = 0;
    for (int j = threadIdx.x; j < classes; j += blockDim.x) {
        p[j] = expf(z[j] - zmax);
        sum += p[j];
        dot += double(smoothed_target(j, label, smoothing, off)) * (z[j] - zmax);
    }
    sum = block_sum(sum);
    dot = block_sum(dot);
    for (int j = threadIdx.x; j < classes; j += blockDim.x)
        p[j] = float(p[j] / sum);
    if (threadIdx.x == 0) {
        loss[blockIdx.x] = log(sum) - dot;
        prediction[blockIdx.x] = isnan(z[0]) ? 0 : first_max;
    }
}

// dlogits = (p - t) grad_scale.
__global__ void softmax_cross_entropy_backward(const float* prob, const std::int32_t* labels,
                                               int classes, float smoothing, float grad_scale,
                                               std::size_t count, float* dlogits) {
    const float off = smoothing / float(classes);
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const int j = int(i % classes);
        const int label = labels[i / classes];
        dlogits[i] = (prob[i] - smoothed_target(j, label, smoothing, off)) * grad_scale;
    }
}

class GpuSoftmaxCrossEntropy final : public SoftmaxCrossEntropyKernel {
  public:
    GpuSoftmaxCrossEntropy(GpuContext& ctx, const TensorDesc& logits, float label_smoothing)
        : ctx_(ctx),
          shape_(logits.shape),
          smoothing_(label_smoothing),
          prob_(ctx.allocate(logits.shape.numel())),
          dlogits_(ctx.allocate(logits.shape.numel())),
          // int32 and float are both 4 bytes; a double takes two floats (cudaMalloc aligns
          // every buffer to 256 bytes).
          labels_(ctx.allocate(batch())),
          predictions_(ctx.allocate(batch())),
          losses_(ctx.allocate(2 * batch())) {
        // Per sample: a double loss, then an int32 label and prediction, in one pinned block
        // (the doubles first, so that each is aligned).
        void* pinned = nullptr;
        const std::size_t bytes = batch() * (sizeof(double) + 2 * sizeof(std::int32_t));
        check_cuda(cudaMallocHost(&pinned, bytes),
                   "cudaMallocHost of " + std::to_string(bytes) + " bytes for the loss");
        pinned_.reset(pinned);
        check_cuda(cudaEventCreateWithFlags(&copied_back_, cudaEventDisableTiming),
                   "cudaEventCreateWithFlags");
    }

    ~GpuSoftmaxCrossEntropy() override {
        // The copies may still be running into the pinned block, which goes after this.
        cudaEventSynchronize(copied_back_);
        cudaEventDestroy(copied_back_);
    }

    GpuSoftmaxCrossEntropy(const GpuSoftmaxCrossEntropy&) = delete;
    GpuSoftmaxCrossEntropy& operator=(const GpuSoftmaxCrossEntropy&) = delete;

    void forward(const Tensor& logits, std::span<const std::int32_t> labels) override {
        if (labels.size() != batch())
            throw Error(ErrorKind::Internal, "the loss over " + std::to_string(batch()) +
                                                 " samples was given " +
                                                 std::to_string(labels.size()) + " labels");
        // The pinned block is the last forward's until its copy back is done (at once when
        // result() was asked, as a step does), and the labels' copy to the GPU came before.
        check_cuda(cudaEventSynchronize(copied_back_), "a GPU kernel");
        std::copy(labels.begin(), labels.end(), host_labels());
        check_cuda(cudaMemcpyAsync(labels_data(), host_labels(), labels.size_bytes(),
                                   cudaMemcpyHostToDevice, ctx_.stream()),
                   "cudaMemcpyAsync of the labels to the GPU");
        softmax_cross_entropy_forward<<<unsigned(shape_.n), kThreadsPerBlock, 0, ctx_.stream()>>>(
            logits.data, labels_data(), shape_.c, smoothing_, prob_.data(), losses_data(),
            predictions_data());
        check_launch("softmax cross-entropy forward");
        check_cuda(cudaMemcpyAsync(host_losses(), losses_data(), batch() * sizeof(double),
                                   cudaMemcpyDeviceToHost, ctx_.stream()),
                   "cudaMemcpyAsync of the losses to the host");
        check_cuda(
            cudaMemcpyAsync(host_predictions(), predictions_data(), batch() * sizeof(std::int32_t),
                            cudaMemcpyDeviceToHost, ctx_.stream()),
            "cudaMemcpyAsync of the predictions to the host");
        check_cuda(cudaEventRecord(copied_back_, ctx_.stream()), "cudaEventRecord");
        pending_ = true;
    }

    LossResult result() override {
        if (!std::exchange(pending_, false))
            throw Error(ErrorKind::Internal, "the loss's result was asked for before its forward");
        check_cuda(cudaEventSynchronize(copied_back_), "a GPU kernel");
        LossResult result;
        for (std::size_t i = 0; i < batch(); ++i) {
            result.loss_sum += host_losses()[i];
            if (host_predictions()[i] == host_labels()[i])
                ++result.correct;
        }
        return result;
    }

    Tensor backward(float grad_scale) override {
        const std::size_t count = shape_.numel();
        softmax_cross_entropy_backward<<<blocks_for(count), kThreadsPerBlock, 0, ctx_.stream()>>>(
            prob_.data(), labels_data(), shape_.c, smoothing_, grad_scale, count, dlogits_.data());
        check_launch("softmax cross-entropy backward");
        return Tensor{TensorDesc{shape_, nullptr}, dlogits_.data()};
    }

  private:
    std::size_t batch() const { return std::size_t(shape_.n); }
    std::int32_t* labels_data() const { return reinterpret_cast<std::int32_t*>(labels_.data()); }
    std::int32_t* predictions_data() const {
        return reinterpret_cast<std::int32_t*>(predictions_.data());
    }
    double* losses_data() const { return reinterpret_cast<double*>(losses_.data()); }
    double* host_losses() const { return static_cast<double*>(pinned_.get()); }
    std::int32_t* host_labels() const {
        return reinterpret_cast<std::int32_t*>(host_losses() + batch());
    }
    std::int32_t* host_predictions() const { return host_labels() + batch(); }

    GpuContext& ctx_;
    Shape shape_;
    float smoothing_;
    DeviceBuffer prob_, dlogits_;
    DeviceBuffer labels_, predictions_, losses_;  // int32, int32 and double per sample
    std::unique_ptr<void, cudaError_t (*)(void*)> pinned_{nullptr, &cudaFreeHost};
    cudaEvent_t copied_back_ = nullptr;  // after the last forward's copies to the host
    bool pending_ = false;               // a forward whose result() was not asked for yet
};

}  // namespace

std::unique_ptr<SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(GpuContext& ctx,
                                                                      const TensorDesc& logits,
                                                                      float label_smoothing) {
    require_plain(logits, "softmax cross-entropy");
    if (logits.shape.h != 1 || logits.shape.w != 1 || logits.shape.n < 1 || logits.shape.c < 1)
        throw Error(ErrorKind::Internal,
                    "the loss expects plain (n, classes) logits, got " + logits.shape.str());
    return std::make_unique<GpuSoftmaxCrossEntropy>(ctx, logits, label_smoothing);
}

}  // namespace scalelab::cuda
