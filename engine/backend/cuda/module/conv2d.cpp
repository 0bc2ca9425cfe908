// Convolution on cuDNN, NCHW float. The three algorithms (forward, backward data, backward
// filter) are chosen once, when the kernel is made for its input shape: cuDNN's Find runs every
// algorithm on scratch buffers and times it, and the fastest one that succeeded is kept, among
// the deterministic ones only when the backend was asked for determinism. One workspace, the
// largest the three need, is allocated then. The bias is added after the convolution
// (cudnnAddTensor) and its gradient is the sum of dy over N, H and W
// (cudnnConvolutionBackwardBias).
//
// TF32: on Ampere and later, cuDNN's default math lets float convolutions run on tensor cores
// in TF32 (10-bit mantissa). Without TF32 the descriptor asks for CUDNN_FMA_MATH (true float
// arithmetic) and an algorithm Find reports with any other math type is refused, so that the
// results match the CPU backend within float rounding.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "backend/cuda/module/cudnn_descriptors.h"
#include "backend/cuda/module/gpu_kernels.h"

namespace scalelab::cuda {

namespace {

// Runs cuDNN's Find for one direction (count_call says how many algorithms there are; find
// times them all and fills their results) and returns the fastest result that succeeded, is
// deterministic when that is asked for, and runs in true float (FMA) math when TF32 is off.
// Perf is one of cuDNN's three AlgoPerf structs.
template <typename Perf, typename FindCall>
Perf find_fastest(cudnnHandle_t handle, cudnnStatus_t (*count_call)(cudnnHandle_t, int*),
                  FindCall find, bool deterministic, bool tf32, const char* direction) {
    const std::string what = std::string(direction) + " convolution algorithms";
    int max_count = 0;
    check_cudnn(count_call(handle, &max_count), "counting the " + what);
    std::vector<Perf> results(static_cast<std::size_t>(max_count));
    int returned = 0;
    check_cudnn(find(max_count, &returned, results.data()), "cudnnFind of the " + what);
    results.resize(static_cast<std::size_t>(returned));
    const Perf* best = nullptr;
    for (const Perf& r : results) {
        if (r.status != CUDNN_STATUS_SUCCESS)
            continue;
        if (deterministic && r.determinism != CUDNN_DETERMINISTIC)
            continue;
        if (!tf32 && r.mathType != CUDNN_FMA_MATH)
            continue;
        if (best == nullptr || r.time < best->time)
            best = &r;
    }
    if (best == nullptr)
        throw Error(ErrorKind::Internal, "cuDNN found none of its " + std::to_string(returned) +
                                             " " + what + " usable" +
                                             (deterministic ? " (deterministic ones only)" : "") +
                                             (tf32 ? "" : " with TF32 off"));
    return *best;
}

class GpuConv2d final : public Conv2dKernel {
  public:
    GpuConv2d(GpuContext& ctx, const Conv2dConfig& cfg, const TensorDesc& x)
        : ctx_(ctx),
          cfg_(cfg),
          x_desc_(x),
          y_desc_{Shape{x.shape.n, cfg.out_channels,
                        (x.shape.h + 2 * cfg.padding - cfg.kernel) / cfg.stride + 1,
                        (x.shape.w + 2 * cfg.padding - cfg.kernel) / cfg.stride + 1},
                  nullptr},
          x_tensor_(x.shape),
          y_tensor_(y_desc_.shape),
          bias_tensor_(Shape{1, cfg.out_channels, 1, 1}),
          filter_(cfg),
          forward_conv_(cfg, math_asked(ctx)),
          backward_data_conv_(cfg, math_asked(ctx)),
          backward_filter_conv_(cfg, math_asked(ctx)) {
        check_output_shape();
        choose_algorithms();
        y_ = ctx.allocate(y_desc_.shape.numel());
        dx_ = ctx.allocate(x_desc_.shape.numel());
    }

    Tensor forward(const Tensor& x, const float* weight, const float* bias) override {
        x_ = x.data;
        check_cudnn(
            cudnnConvolutionForward(ctx_.cudnn(), &kOne, x_tensor_.get(), x.data, filter_.get(),
                                    weight, forward_conv_.get(), forward_algo_, workspace_.data(),
                                    forward_bytes_, &kZero, y_tensor_.get(), y_.data()),
            "cudnnConvolutionForward");
        if (cfg_.bias)
            check_cudnn(cudnnAddTensor(ctx_.cudnn(), &kOne, bias_tensor_.get(), bias, &kOne,
                                       y_tensor_.get(), y_.data()),
                        "cudnnAddTensor (convolution bias)");
        return Tensor{y_desc_, y_.data()};
    }

    Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                    bool want_dx) override {
        // beta = 0 everywhere: the gradients are written, not accumulated.
        check_cudnn(cudnnConvolutionBackwardFilter(
                        ctx_.cudnn(), &kOne, x_tensor_.get(), x_, y_tensor_.get(), dy.data,
                        backward_filter_conv_.get(), backward_filter_algo_, workspace_.data(),
                        backward_filter_bytes_, &kZero, filter_.get(), dweight),
                    "cudnnConvolutionBackwardFilter");
        if (cfg_.bias)
            check_cudnn(cudnnConvolutionBackwardBias(ctx_.cudnn(), &kOne, y_tensor_.get(), dy.data,
                                                     &kZero, bias_tensor_.get(), dbias),
                        "cudnnConvolutionBackwardBias");
        if (!want_dx)
            return Tensor{};
        check_cudnn(cudnnConvolutionBackwardData(
                        ctx_.cudnn(), &kOne, filter_.get(), weight, y_tensor_.get(), dy.data,
                        backward_data_conv_.get(), backward_data_algo_, workspace_.data(),
                        backward_data_bytes_, &kZero, x_tensor_.get(), dx_.data()),
                    "cudnnConvolutionBackwardData");
        return Tensor{x_desc_, dx_.data()};
    }

  private:
    // Default math permits TF32 on tensor cores (Ampere and later), FMA math forbids it.
    static cudnnMathType_t math_asked(const GpuContext& ctx) {
        return ctx.tf32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    }

    // The output shape is the CPU backend's and the model's (nn/conv2d.cpp); cuDNN must agree.
    void check_output_shape() const {
        int n = 0, c = 0, h = 0, w = 0;
        check_cudnn(cudnnGetConvolution2dForwardOutputDim(forward_conv_.get(), x_tensor_.get(),
                                                          filter_.get(), &n, &c, &h, &w),
                    "cudnnGetConvolution2dForwardOutputDim");
        const Shape cudnn_shape{n, c, h, w};
        if (cudnn_shape != y_desc_.shape)
            throw Error(ErrorKind::Internal, "the GPU convolution of " + x_desc_.shape.str() +
                                                 " gives " + cudnn_shape.str() + ", expected " +
                                                 y_desc_.shape.str());
    }

    // Find allocates its own scratch tensors and workspaces (cudaMalloc), runs each algorithm
    // and blocks until all are timed. Each descriptor then takes the math type of its chosen
    // algorithm: cuDNN picks the kernel from the pair (algorithm, math type).
    void choose_algorithms() {
        const cudnnHandle_t h = ctx_.cudnn();
        const bool det = ctx_.deterministic();
        const bool tf32 = ctx_.tf32();

        const auto f = find_fastest<cudnnConvolutionFwdAlgoPerf_t>(
            h, cudnnGetConvolutionForwardAlgorithmMaxCount,
            [&](int count, int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
                return cudnnFindConvolutionForwardAlgorithm(h, x_tensor_.get(), filter_.get(),
                                                            forward_conv_.get(), y_tensor_.get(),
                                                            count, returned, results);
            },
            det, tf32, "forward");
        forward_algo_ = f.algo;
        forward_bytes_ = f.memory;
        forward_conv_.set_math_type(f.mathType);

        const auto d = find_fastest<cudnnConvolutionBwdDataAlgoPerf_t>(
            h, cudnnGetConvolutionBackwardDataAlgorithmMaxCount,
            [&](int count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results) {
                return cudnnFindConvolutionBackwardDataAlgorithm(
                    h, filter_.get(), y_tensor_.get(), backward_data_conv_.get(), x_tensor_.get(),
                    count, returned, results);
            },
            det, tf32, "backward-data");
        backward_data_algo_ = d.algo;
        backward_data_bytes_ = d.memory;
        backward_data_conv_.set_math_type(d.mathType);

        const auto w = find_fastest<cudnnConvolutionBwdFilterAlgoPerf_t>(
            h, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount,
            [&](int count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* results) {
                return cudnnFindConvolutionBackwardFilterAlgorithm(
                    h, x_tensor_.get(), y_tensor_.get(), backward_filter_conv_.get(), filter_.get(),
                    count, returned, results);
            },
            det, tf32, "backward-filter");
        backward_filter_algo_ = w.algo;
        backward_filter_bytes_ = w.memory;
        backward_filter_conv_.set_math_type(w.mathType);

        const std::size_t bytes =
            std::max({forward_bytes_, backward_data_bytes_, backward_filter_bytes_});
        workspace_ = ctx_.allocate((bytes + sizeof(float) - 1) / sizeof(float));
    }

    GpuContext& ctx_;
    Conv2dConfig cfg_;
    TensorDesc x_desc_, y_desc_;
    TensorDescriptor x_tensor_, y_tensor_, bias_tensor_;  // x and dx, y and dy, bias and dbias
    FilterDescriptor filter_;                             // weight and dweight
    // One per direction: each carries the math type of its own chosen algorithm.
    ConvolutionDescriptor forward_conv_, backward_data_conv_, backward_filter_conv_;
    cudnnConvolutionFwdAlgo_t forward_algo_{};
    cudnnConvolutionBwdDataAlgo_t backward_data_algo_{};
    cudnnConvolutionBwdFilterAlgo_t backward_filter_algo_{};
    std::size_t forward_bytes_ = 0, backward_data_bytes_ = 0, backward_filter_bytes_ = 0;
    DeviceBuffer workspace_, y_, dx_;
    const float* x_ = nullptr;  // forward's input, kept for the filter gradient
};

}  // namespace

std::unique_ptr<Conv2dKernel> make_conv2d(GpuContext& ctx, const Conv2dConfig& cfg,
                                          const TensorDesc& x) {
    require_plain(x, "convolution");
    if (x.shape.c != cfg.in_channels)
        throw Error(ErrorKind::Internal, "a convolution of " + std::to_string(cfg.in_channels) +
                                             " input channels was given " + x.shape.str());
    return std::make_unique<GpuConv2d>(ctx, cfg, x);
}

}  // namespace scalelab::cuda
