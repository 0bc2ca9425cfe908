#pragma once

// RAII owners of the cuDNN descriptors the layers describe their tensors and operations with:
// each creates its descriptor, sets it once, and destroys it with itself. All tensors are plain
// NCHW float (the CUDA backend's one layout).

#include <cudnn.h>

#include "backend/cuda/module/library_errors.h"
#include "backend/kernels.h"
#include "backend/tensor.h"

namespace scalelab::cuda {

// The blend factors of cuDNN's "y = alpha * op(...) + beta * y": kOne, kZero write the result;
// kOne, kOne add it to what y holds. cuDNN reads them from host memory as floats for float data.
inline constexpr float kOne = 1.0f;
inline constexpr float kZero = 0.0f;

// One descriptor of kind Handle, made by create() and released by destroy(). Not copyable: the
// handle has one owner.
template <typename Handle, cudnnStatus_t (*create)(Handle*), cudnnStatus_t (*destroy)(Handle)>
class CudnnDescriptor {
  public:
    CudnnDescriptor(const CudnnDescriptor&) = delete;
    CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
    Handle get() const { return handle_; }

  protected:
    explicit CudnnDescriptor(const char* create_call) {
        check_cudnn(create(&handle_), create_call);
    }
    ~CudnnDescriptor() { destroy(handle_); }  // a destructor cannot report; destroy only frees

  private:
    Handle handle_ = nullptr;
};

// A plain NCHW float tensor of `shape`; Shape{1, c, 1, 1} describes a per-channel vector (a
// bias, batch-norm scale, shift and statistics), which cuDNN broadcasts over N, H and W.
class TensorDescriptor final
    : public CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor,
                             cudnnDestroyTensorDescriptor> {
  public:
    explicit TensorDescriptor(const Shape& shape);
};

// The convolution's weights: OIHW float (PyTorch's order), out x in x kernel x kernel.
class FilterDescriptor final
    : public CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor,
                             cudnnDestroyFilterDescriptor> {
  public:
    explicit FilterDescriptor(const Conv2dConfig& config);
};

// A 2-d cross-correlation (what deep-learning frameworks call convolution) with the config's
// padding and stride on both axes, no dilation, one group, float accumulation, and the math
// type that says whether tensor cores (TF32) may be used.
class ConvolutionDescriptor final
    : public CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                             cudnnDestroyConvolutionDescriptor> {
  public:
    ConvolutionDescriptor(const Conv2dConfig& config, cudnnMathType_t math);
    void set_math_type(cudnnMathType_t math);
};

// 2-d pooling over a window_h x window_w window with the same padding and stride on both axes.
// NaNs propagate (a NaN in a window is its maximum), as in PyTorch.
class PoolingDescriptor final
    : public CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor,
                             cudnnDestroyPoolingDescriptor> {
  public:
    PoolingDescriptor(cudnnPoolingMode_t mode, int window_h, int window_w, int padding, int stride);
};

}  // namespace scalelab::cuda
