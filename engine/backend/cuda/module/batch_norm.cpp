// Batch normalisation on cuDNN, per channel over N, H and W (CUDNN_BATCHNORM_SPATIAL):
//   training:  mean, var = the batch's mean and biased variance
//              y = scale (x - mean) / sqrt(var + eps) + shift
//              running_mean = (1 - m) running_mean + m mean
//              running_var  = (1 - m) running_var  + m var n / (n - 1)      (n = N * H * W)
//   inference: y = scale (x - running_mean) / sqrt(running_var + eps) + shift
// cuDNN's exponentialAverageFactor is PyTorch's momentum m, and cuDNN updates the running
// variance with the unbiased batch variance, as PyTorch (which calls this same function) and the
// CPU backend do. Training keeps the batch mean and 1 / sqrt(var + eps) for backward.
// With a fused ReLU, forward applies y = max(y, 0) in place after cuDNN, and backward first
// masks dy where y = 0 (dy' = dy where y > 0): the gradient of the ReLU, then that of the norm.

#include <cmath>
#include <string>

#include "backend/cuda/module/cudnn_descriptors.h"
#include "backend/cuda/module/gpu_kernels.h"
#include "backend/cuda/module/relu_elementwise.h"

namespace scalelab::cuda {

namespace {

class GpuBatchNorm final : public BatchNormKernel {
  public:
    GpuBatchNorm(GpuContext& ctx, const BatchNormConfig& cfg, const TensorDesc& x, bool training)
        : ctx_(ctx),
          cfg_(cfg),
          desc_(x),
          training_(training),
          x_tensor_(x.shape),
          channel_tensor_(Shape{1, cfg.channels, 1, 1}),
          y_(ctx.allocate(x.shape.numel())) {
        if (!training)
            return;
        dx_ = ctx.allocate(x.shape.numel());
        saved_mean_ = ctx.allocate(std::size_t(cfg.channels));
        saved_inv_std_ = ctx.allocate(std::size_t(cfg.channels));
        if (cfg.fused_relu)
            masked_dy_ = ctx.allocate(x.shape.numel());
    }

    Tensor forward(const Tensor& x, const float* scale, const float* shift, float* running_mean,
                   float* running_var) override {
        x_ = x.data;
        if (training_)
            check_cudnn(cudnnBatchNormalizationForwardTraining(
                            ctx_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, x_tensor_.get(),
                            x.data, x_tensor_.get(), y_.data(), channel_tensor_.get(), scale, shift,
                            double(cfg_.momentum), running_mean, running_var, double(cfg_.eps),
                            saved_mean_.data(), saved_inv_std_.data()),
                        "cudnnBatchNormalizationForwardTraining");
        else
            check_cudnn(cudnnBatchNormalizationForwardInference(
                            ctx_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, x_tensor_.get(),
                            x.data, x_tensor_.get(), y_.data(), channel_tensor_.get(), scale, shift,
                            running_mean, running_var, double(cfg_.eps)),
                        "cudnnBatchNormalizationForwardInference");
        if (cfg_.fused_relu)
            relu_forward(y_.data(), y_.data(), y_.size(), ctx_.stream());
        return Tensor{desc_, y_.data()};
    }

    Tensor backward(const Tensor& dy, const float* scale, float* dscale, float* dshift) override {
        if (!training_)
            throw Error(ErrorKind::Internal, "backward of a batch norm made for inference");
        const float* norm_dy = dy.data;
        if (cfg_.fused_relu) {
            relu_backward(y_.data(), dy.data, masked_dy_.data(), masked_dy_.size(), ctx_.stream());
            norm_dy = masked_dy_.data();
        }
        // Data and parameter gradients both with alpha = 1, beta = 0: written, not accumulated.
        check_cudnn(cudnnBatchNormalizationBackward(
                        ctx_.cudnn(), CUDNN_BATCHNORM_SPATIAL, &kOne, &kZero, &kOne, &kZero,
                        x_tensor_.get(), x_, x_tensor_.get(), norm_dy, x_tensor_.get(), dx_.data(),
                        channel_tensor_.get(), scale, dscale, dshift, double(cfg_.eps),
                        saved_mean_.data(), saved_inv_std_.data()),
                    "cudnnBatchNormalizationBackward");
        return Tensor{desc_, dx_.data()};
    }

  private:
    GpuContext& ctx_;
    BatchNormConfig cfg_;
    TensorDesc desc_;  // of the input, the output and dx alike
    bool training_;
    TensorDescriptor x_tensor_;        // x, y, dy and dx
    TensorDescriptor channel_tensor_;  // 1 x C x 1 x 1: scale, shift, statistics, gradients
    DeviceBuffer y_, dx_;
    DeviceBuffer saved_mean_, saved_inv_std_;  // the batch's, from forward for backward
    DeviceBuffer masked_dy_;                   // dy with the fused ReLU's gradient applied
    const float* x_ = nullptr;                 // forward's input, kept for backward
};

}  // namespace

std::unique_ptr<BatchNormKernel> make_batch_norm(GpuContext& ctx, const BatchNormConfig& cfg,
                                                 const TensorDesc& x, bool training) {
    require_plain(x, "batch norm");
    if (x.shape.c != cfg.channels)
        throw Error(ErrorKind::Internal, "a batch norm of " + std::to_string(cfg.channels) +
                                             " channels was given " + x.shape.str());
    // cuDNN refuses a smaller epsilon; NaN fails the comparison too.
    if (!(double(cfg.eps) >= CUDNN_BN_MIN_EPSILON))
        throw Error(ErrorKind::InvalidSpec,
                    "batch norm epsilon " + std::to_string(cfg.eps) + " is below cuDNN's minimum " +
                        std::to_string(CUDNN_BN_MIN_EPSILON) + ": use a larger epsilon");
    // The unbiased variance divides by n - 1: one value per channel has none (PyTorch refuses
    // it too).
    if (training && std::size_t(x.shape.n) * x.shape.h * x.shape.w < 2)
        throw Error(ErrorKind::InvalidSpec,
                    "batch norm in training needs more than one value per channel, got " +
                        x.shape.str() + ": use a larger batch");
    return std::make_unique<GpuBatchNorm>(ctx, cfg, x, training);
}

}  // namespace scalelab::cuda
