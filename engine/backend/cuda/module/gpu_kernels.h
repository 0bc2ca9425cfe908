#pragma once

// The CUDA backend's kernels, one factory per kind of layer (kernels.h gives the contract each
// follows). Every tensor on the GPU is plain NCHW (TensorDesc::layout null); a factory given
// another layout throws Error(Internal). Each kernel allocates its outputs, input gradients and
// workspaces when it is made, and runs on the context's stream.

#include <memory>

#include "backend/cuda/module/gpu_context.h"
#include "backend/kernels.h"

namespace scalelab::cuda {

// cuDNN: convolution (algorithms found once per shape), batch norm, pooling, ReLU.
std::unique_ptr<Conv2dKernel> make_conv2d(GpuContext&, const Conv2dConfig&, const TensorDesc& x);
std::unique_ptr<BatchNormKernel> make_batch_norm(GpuContext&, const BatchNormConfig&,
                                                 const TensorDesc& x, bool training);
std::unique_ptr<PoolKernel> make_pool(GpuContext&, const PoolConfig&, const TensorDesc& x);
std::unique_ptr<ReluKernel> make_relu(GpuContext&, const TensorDesc& x);

// cuBLAS and the backend's own kernels.
std::unique_ptr<LinearKernel> make_linear(GpuContext&, const LinearConfig&, const TensorDesc& x);
std::unique_ptr<SyncBatchNormKernel> make_sync_batch_norm(GpuContext&, const BatchNormConfig&,
                                                          const TensorDesc& x);
std::unique_ptr<DropoutKernel> make_dropout(GpuContext&, const TensorDesc& x);
std::unique_ptr<AddKernel> make_add(GpuContext&, const TensorDesc& a, const TensorDesc& b);
std::unique_ptr<ReorderKernel> make_to_plain(GpuContext&, const TensorDesc& x);
std::unique_ptr<SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(GpuContext&,
                                                                      const TensorDesc& logits,
                                                                      float label_smoothing);

// Throws Error(Internal) unless `x` is plain NCHW, naming the kernel that was given it.
void require_plain(const TensorDesc& x, const char* kernel);

}  // namespace scalelab::cuda
