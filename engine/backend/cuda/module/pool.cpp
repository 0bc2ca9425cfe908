// Max and average pooling on cuDNN, with the CPU backend's semantics (cpu/pool.cpp):
//  - kernel 0 is global pooling: the window is the whole H x W, stride 1, no padding;
//  - the output side is (side + 2 padding - window) / stride + 1, rounded down;
//  - average pooling counts the zero padding in the divisor (window area), as PyTorch's
//    AvgPool2d by default and oneDNN's pooling_avg_include_padding;
//  - max pooling ignores the padding; cuDNN's deterministic max mode is used so that backward
//    gives the same bits on every run.
// Backward recomputes where each window's maximum was from x and y, so forward's x must stay
// unchanged until backward (the kernels.h contract).

#include <string>

#include "backend/cuda/module/cudnn_descriptors.h"
#include "backend/cuda/module/gpu_kernels.h"

namespace scalelab::cuda {

namespace {

// The window, stride and padding a PoolConfig means for an input of `x`'s shape.
struct PoolWindow {
    int height, width, stride, padding;

    PoolWindow(const PoolConfig& cfg, const Shape& x)
        : height(cfg.kernel == 0 ? x.h : cfg.kernel),
          width(cfg.kernel == 0 ? x.w : cfg.kernel),
          stride(cfg.kernel == 0 ? 1 : cfg.stride),
          padding(cfg.kernel == 0 ? 0 : cfg.padding) {}

    Shape output(const Shape& x) const {
        return Shape{x.n, x.c, (x.h + 2 * padding - height) / stride + 1,
                     (x.w + 2 * padding - width) / stride + 1};
    }
};

class GpuPool final : public PoolKernel {
  public:
    GpuPool(GpuContext& ctx, const PoolConfig& cfg, const TensorDesc& x)
        : ctx_(ctx),
          window_(cfg, x.shape),
          x_desc_(x),
          y_desc_{window_.output(x.shape), nullptr},
          x_tensor_(x.shape),
          y_tensor_(y_desc_.shape),
          pooling_(cfg.kind == PoolKind::Max ? CUDNN_POOLING_MAX_DETERMINISTIC
                                             : CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING,
                   window_.height, window_.width, window_.padding, window_.stride),
          y_(ctx.allocate(y_desc_.shape.numel())),
          dx_(ctx.allocate(x.shape.numel())) {
        check_output_shape();
    }

    Tensor forward(const Tensor& x) override {
        x_ = x.data;
        check_cudnn(cudnnPoolingForward(ctx_.cudnn(), pooling_.get(), &kOne, x_tensor_.get(),
                                        x.data, &kZero, y_tensor_.get(), y_.data()),
                    "cudnnPoolingForward");
        return Tensor{y_desc_, y_.data()};
    }

    Tensor backward(const Tensor& dy) override {
        check_cudnn(cudnnPoolingBackward(ctx_.cudnn(), pooling_.get(), &kOne, y_tensor_.get(),
                                         y_.data(), y_tensor_.get(), dy.data, x_tensor_.get(), x_,
                                         &kZero, x_tensor_.get(), dx_.data()),
                    "cudnnPoolingBackward");
        return Tensor{x_desc_, dx_.data()};
    }

  private:
    void check_output_shape() const {
        int n = 0, c = 0, h = 0, w = 0;
        check_cudnn(
            cudnnGetPooling2dForwardOutputDim(pooling_.get(), x_tensor_.get(), &n, &c, &h, &w),
            "cudnnGetPooling2dForwardOutputDim");
        const Shape cudnn_shape{n, c, h, w};
        if (cudnn_shape != y_desc_.shape)
            throw Error(ErrorKind::Internal, "the GPU pooling of " + x_desc_.shape.str() +
                                                 " gives " + cudnn_shape.str() + ", expected " +
                                                 y_desc_.shape.str());
    }

    GpuContext& ctx_;
    PoolWindow window_;
    TensorDesc x_desc_, y_desc_;
    TensorDescriptor x_tensor_, y_tensor_;  // x and dx, y and dy
    PoolingDescriptor pooling_;
    DeviceBuffer y_, dx_;
    const float* x_ = nullptr;  // forward's input, kept for backward
};

}  // namespace

std::unique_ptr<PoolKernel> make_pool(GpuContext& ctx, const PoolConfig& cfg, const TensorDesc& x) {
    require_plain(x, "pooling");
    if (cfg.kernel != 0 &&
        (x.shape.h + 2 * cfg.padding < cfg.kernel || x.shape.w + 2 * cfg.padding < cfg.kernel))
        throw Error(ErrorKind::InvalidSpec, "pooling window " + std::to_string(cfg.kernel) +
                                                " is larger than its input " + x.shape.str() +
                                                ": use larger images or a smaller model");
    return std::make_unique<GpuPool>(ctx, cfg, x);
}

}  // namespace scalelab::cuda
