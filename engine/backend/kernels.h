#pragma once

// The operations a layer asks its backend for, one interface per kind of layer. A kernel is a
// plan for one input shape (descriptors, primitives, and the buffers for its outputs and input
// gradients), created once on the thread that runs it and reused for every step.
//
// Conventions shared by all kernels:
//  - forward() returns a view of the kernel's own output buffer; backward() returns a view of
//    its own input-gradient buffer. Both stay valid until the same call runs again.
//  - backward() takes dy in the layout forward() gave y, and returns dx in the layout of the x
//    that forward() was given: layouts chain backwards exactly as they chained forwards, so no
//    layer ever converts a gradient it did not convert on the way in.
//  - forward() keeps a view of x for backward(): x must stay unchanged until backward() ran.
//  - parameters (weights, biases, batch-norm scale and shift) are plain arrays in PyTorch's
//    order (conv OIHW, linear OI); parameter gradients are written, not accumulated.
//  - backward() is only called after a forward() in training mode on the same kernel.

#include <cstdint>
#include <span>

#include "backend/tensor.h"

namespace scalelab {

struct Conv2dConfig {
    int in_channels = 0;
    int out_channels = 0;
    int kernel = 3;
    int stride = 1;
    int padding = 0;
    bool bias = true;
};

class Conv2dKernel {
  public:
    virtual ~Conv2dKernel() = default;
    virtual Tensor forward(const Tensor& x, const float* weight, const float* bias) = 0;
    // dx is computed only when want_dx (the first layer of a model needs none).
    virtual Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                            bool want_dx) = 0;
};

struct LinearConfig {
    int in_features = 0;
    int out_features = 0;
};

class LinearKernel {
  public:
    virtual ~LinearKernel() = default;
    virtual Tensor forward(const Tensor& x, const float* weight, const float* bias) = 0;
    virtual Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                            bool want_dx) = 0;
};

struct BatchNormConfig {
    int channels = 0;
    bool fused_relu = false;  // y = relu(bn(x)) in one pass; backward masks dy where y = 0
    float eps = 1e-5f;
    float momentum = 0.1f;  // PyTorch's: running = (1 - momentum) * running + momentum * batch
};

class BatchNormKernel {
  public:
    virtual ~BatchNormKernel() = default;
    // Training: normalises with the batch statistics and updates the running ones (running
    // variance with the unbiased batch variance, as PyTorch). Inference: uses the running ones.
    virtual Tensor forward(const Tensor& x, const float* scale, const float* shift,
                           float* running_mean, float* running_var) = 0;
    virtual Tensor backward(const Tensor& dy, const float* scale, float* dscale, float* dshift) = 0;
};

// Batch norm in training whose statistics come from outside the kernel: synchronised batch
// norm (PyTorch's SyncBatchNorm), where they are those of the GLOBAL batch, every device's
// samples together. The kernel never communicates: the layer runs its four phases in order and
// combines the devices' numbers between them (an all-gather after local_moments, an all-reduce
// after gradient_sums). Host arrays are per channel, c = 0 .. channels - 1; n is the global
// count of values per channel (sum over devices of N * H * W).
//   forward:  mean, var (biased) of the global batch;  xhat = (x - mean) / sqrt(var + eps)
//             y = gamma xhat + beta  (then relu, when fused)
//             running_mean = (1 - m) running_mean + m mean
//             running_var  = (1 - m) running_var  + m var n / (n - 1)
//   backward: dy is first masked where y == 0 when the ReLU is fused; then
//             dgamma = sum_local(dy xhat), dbeta = sum_local(dy)   (this device's parameter
//             gradients: DDP averages them as any other)
//             dx = gamma / sqrt(var + eps) (dy - sum(dy) / n - xhat sum(dy xhat) / n)
//             with sum(dy) and sum(dy xhat) over the GLOBAL batch.
class SyncBatchNormKernel {
  public:
    virtual ~SyncBatchNormKernel() = default;
    // This device's N * H * W: the count its moments are over.
    virtual double local_count() const = 0;
    // mean_var[c] = mean of x over (N, H, W), mean_var[channels + c] = its biased variance
    // (2 * channels floats). x must stay unchanged until backward() ran.
    virtual void local_moments(const Tensor& x, std::span<float> mean_var) = 0;
    // Normalises the x of local_moments with the given (global) mean and biased variance and
    // updates the running statistics with them (n: the global count).
    virtual Tensor forward(const float* mean, const float* var, double n, const float* scale,
                           const float* shift, float* running_mean, float* running_var) = 0;
    // Writes this device's parameter gradients dscale = sum(dy xhat), dshift = sum(dy) and
    // returns the same sums on the host: sums[c] = sum(dy), sums[channels + c] = sum(dy xhat).
    virtual void gradient_sums(const Tensor& dy, float* dscale, float* dshift,
                               std::span<float> sums) = 0;
    // dx from the dy of gradient_sums and the global sums (same order) and count.
    virtual Tensor backward(const float* scale, std::span<const float> global_sums, double n) = 0;
};

class ReluKernel {
  public:
    virtual ~ReluKernel() = default;
    virtual Tensor forward(const Tensor& x) = 0;
    virtual Tensor backward(const Tensor& dy) = 0;
};

enum class PoolKind { Max, Average };

struct PoolConfig {
    PoolKind kind = PoolKind::Max;
    int kernel = 2;  // 0: global (the whole spatial extent)
    int stride = 2;
    int padding = 0;
};

class PoolKernel {
  public:
    virtual ~PoolKernel() = default;
    virtual Tensor forward(const Tensor& x) = 0;
    virtual Tensor backward(const Tensor& dy) = 0;
};

class DropoutKernel {
  public:
    virtual ~DropoutKernel() = default;
    // Zeroes each element with probability p and scales the rest by 1 / (1 - p). The mask is a
    // pure function of (seed, the element's logical NCHW index), so every backend draws the same
    // mask, whatever layout its tensors have.
    virtual Tensor forward(const Tensor& x, float p, std::uint64_t seed) = 0;
    virtual Tensor backward(const Tensor& dy) = 0;
};

// y = a + b for the residual join; b is converted to a's layout where they differ.
class AddKernel {
  public:
    virtual ~AddKernel() = default;
    virtual Tensor forward(const Tensor& a, const Tensor& b) = 0;
    // The gradient of a sum reaches both inputs unchanged; this returns it in b's layout.
    virtual Tensor gradient_for_b(const Tensor& dy) = 0;
};

// Converts between a backend layout and another (plain NCHW at the model's edges).
class ReorderKernel {
  public:
    virtual ~ReorderKernel() = default;
    virtual Tensor forward(const Tensor& x) = 0;
    virtual Tensor backward(const Tensor& dy) = 0;
};

struct LossResult {
    double loss_sum = 0;  // summed over the batch
    int correct = 0;      // arg-max predictions equal to the label
};

// Softmax cross-entropy over plain (n, classes) logits, optionally with label smoothing
// (target = (1 - s) one_hot + s / classes, as PyTorch's label_smoothing).
class SoftmaxCrossEntropyKernel {
  public:
    virtual ~SoftmaxCrossEntropyKernel() = default;
    // Gives the backend the loss of these logits and labels (the span may change once this
    // returns). Its numbers reach the host through result(), so that the work given after the
    // forward, such as backward, need not wait for the host to have them.
    virtual void forward(const Tensor& logits, std::span<const std::int32_t> labels) = 0;
    // The last forward's loss sum and correct predictions. On a GPU it waits for those numbers
    // only, not for the work given since. Throws Error(Internal) when no forward came since the
    // last result().
    virtual LossResult result() = 0;
    // d(loss_sum * grad_scale)/d logits; the trainer passes 1 / global batch as grad_scale.
    virtual Tensor backward(float grad_scale) = 0;
};

}  // namespace scalelab
