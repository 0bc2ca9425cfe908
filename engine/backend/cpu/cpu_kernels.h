#pragma once

// The CPU backend's kernel factories, one per file of this folder (conv2d.cpp, ...).

#include <memory>

#include "backend/cpu/dnnl_util.h"
#include "backend/kernels.h"

namespace scalelab::cpu {

std::unique_ptr<Conv2dKernel> make_conv2d(const DnnlContext&, const Conv2dConfig&,
                                          const TensorDesc& x);
std::unique_ptr<LinearKernel> make_linear(const DnnlContext&, const LinearConfig&,
                                          const TensorDesc& x);
std::unique_ptr<BatchNormKernel> make_batch_norm(const DnnlContext&, const BatchNormConfig&,
                                                 const TensorDesc& x, bool training);
std::unique_ptr<SyncBatchNormKernel> make_sync_batch_norm(const DnnlContext&,
                                                          const BatchNormConfig&,
                                                          const TensorDesc& x);
std::unique_ptr<ReluKernel> make_relu(const DnnlContext&, const TensorDesc& x);
std::unique_ptr<PoolKernel> make_pool(const DnnlContext&, const PoolConfig&, const TensorDesc& x);
std::unique_ptr<DropoutKernel> make_dropout(const DnnlContext&, const TensorDesc& x);
std::unique_ptr<AddKernel> make_add(const DnnlContext&, const TensorDesc& a, const TensorDesc& b);
std::unique_ptr<ReorderKernel> make_to_plain(const DnnlContext&, const TensorDesc& x);
std::unique_ptr<SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(const TensorDesc& logits,
                                                                      float label_smoothing);

}  // namespace scalelab::cpu
