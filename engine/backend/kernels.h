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
    // pure function of (seed, element index), so every backend draws the same mask.
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
    virtual LossResult forward(const Tensor& logits, std::span<const std::int32_t> labels) = 0;
    // d(loss_sum * grad_scale)/d logits; the trainer passes 1 / global batch as grad_scale.
    virtual Tensor backward(float grad_scale) = 0;
};

}  // namespace scalelab
