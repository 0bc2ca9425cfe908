// Convolution on cuDNN, NCHW float. The three algorithms (forward, backward data, backward
// filter) are chosen once, when the kernel is made for its input shape, from a list cuDNN ranks:
//  - by default, Find's: cuDNN runs every algorithm on scratch buffers and times it, fastest
//    first;
//  - for a deterministic run, the heuristics' (cudnnGet*Algorithm_v7), which rank the same way on
//    every run for the same GPU, cuDNN and shape. Timing could rank two algorithms within noise
//    of each other one way in one run and the other way in the next, and two algorithms round
//    differently: the run would not repeat bit for bit.
// The first algorithm of the list that succeeded, is deterministic when that is asked for, runs
// in the math asked for and needs no more workspace than GpuContext::workspace_limit() is kept;
// the context's shared workspace is grown to what it needs. The bias is added after the
// convolution (cudnnAddTensor) and its gradient is the sum of dy over N, H and W
// (cudnnConvolutionBackwardBias).
//
// TF32: on Ampere and later, cuDNN's default math lets float convolutions run on tensor cores
// in TF32 (10-bit mantissa). Without TF32 the descriptor asks for CUDNN_FMA_MATH (true float
// arithmetic) and an algorithm listed with any other math type is refused, so that the results
// match the CPU backend within float rounding.

#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "backend/cuda/module/cudnn_descriptors.h"
#include "backend/cuda/module/gpu_kernels.h"

namespace scalelab::cuda {

namespace {

// What an algorithm must be to be kept (see the file comment).
struct AlgorithmNeeds {
    bool deterministic = false;
    bool tf32 = false;
    std::size_t workspace_limit = 0;
};

// The first usable algorithm of one direction's list. count_call says how many algorithms there
// are; list fills their results in cuDNN's order (Find's or the heuristics'). Perf is one of
// cuDNN's three AlgoPerf structs. When memory is why none is usable (an algorithm that ran out
// of it, or one that needs more workspace than the limit), the error is OutOfMemory.
template <typename Perf, typename ListCall>
Perf first_usable(cudnnHandle_t handle, cudnnStatus_t (*count_call)(cudnnHandle_t, int*),
                  ListCall list, const AlgorithmNeeds& needs, const char* direction) {
    const std::string what = std::string(direction) + " convolution algorithms";
    int max_count = 0;
    check_cudnn(count_call(handle, &max_count), "counting the " + what);
    std::vector<Perf> results(static_cast<std::size_t>(max_count));
    int returned = 0;
    check_cudnn(list(max_count, &returned, results.data()), "listing the " + what);
    results.resize(static_cast<std::size_t>(returned));
    bool short_of_memory = false;
    for (const Perf& r : results) {
        if (r.status == CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED ||
            r.status == CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED)
            short_of_memory = true;
        if (r.status != CUDNN_STATUS_SUCCESS)
            continue;
        if (needs.deterministic && r.determinism != CUDNN_DETERMINISTIC)
            continue;
        if (!needs.tf32 && r.mathType != CUDNN_FMA_MATH)
            continue;
        if (r.memory > needs.workspace_limit) {
            short_of_memory = true;
            continue;
        }
        return r;
    }
    const std::string none = "none of cuDNN's " + std::to_string(returned) + " " + what +
                             " is usable" +
                             (needs.deterministic ? " (deterministic ones only)" : "") +
                             (needs.tf32 ? "" : " with TF32 off");
    if (short_of_memory)
        throw library_call_failed(true, "choosing the " + what,
                                  none + " in the GPU memory left (" +
                                      std::to_string(needs.workspace_limit >> 20) +
                                      " MiB of workspace at most)");
    throw Error(ErrorKind::Internal, none);
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
                                    weight, forward_conv_.get(), forward_algo_, ctx_.workspace(),
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
                        backward_filter_conv_.get(), backward_filter_algo_, ctx_.workspace(),
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
                        backward_data_conv_.get(), backward_data_algo_, ctx_.workspace(),
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

    // Each descriptor takes the math type of its chosen algorithm: cuDNN picks the kernel from
    // the pair (algorithm, math type). Find allocates its own scratch tensors and workspaces
    // (cudaMalloc), runs each algorithm on the stream and blocks until all are timed: the
    // stream is drained first, so that no earlier kernel's work is timed as a candidate's.
    void choose_algorithms() {
        const cudnnHandle_t h = ctx_.cudnn();
        const bool find = !ctx_.deterministic();
        if (find)
            ctx_.synchronize();
        const AlgorithmNeeds needs{ctx_.deterministic(), ctx_.tf32(), ctx_.workspace_limit()};

        const auto f = first_usable<cudnnConvolutionFwdAlgoPerf_t>(
            h, cudnnGetConvolutionForwardAlgorithmMaxCount,
            [&](int count, int* returned, cudnnConvolutionFwdAlgoPerf_t* results) {
                return find ? cudnnFindConvolutionForwardAlgorithm(
                                  h, x_tensor_.get(), filter_.get(), forward_conv_.get(),
                                  y_tensor_.get(), count, returned, results)
                            : cudnnGetConvolutionForwardAlgorithm_v7(
                                  h, x_tensor_.get(), filter_.get(), forward_conv_.get(),
                                  y_tensor_.get(), count, returned, results);
            },
            needs, "forward");
        forward_algo_ = f.algo;
        forward_bytes_ = f.memory;
        forward_conv_.set_math_type(f.mathType);

        const auto d = first_usable<cudnnConvolutionBwdDataAlgoPerf_t>(
            h, cudnnGetConvolutionBackwardDataAlgorithmMaxCount,
            [&](int count, int* returned, cudnnConvolutionBwdDataAlgoPerf_t* results) {
                return find ? cudnnFindConvolutionBackwardDataAlgorithm(
                                  h, filter_.get(), y_tensor_.get(), backward_data_conv_.get(),
                                  x_tensor_.get(), count, returned, results)
                            : cudnnGetConvolutionBackwardDataAlgorithm_v7(
                                  h, filter_.get(), y_tensor_.get(), backward_data_conv_.get(),
                                  x_tensor_.get(), count, returned, results);
            },
            needs, "backward-data");
        backward_data_algo_ = d.algo;
        backward_data_bytes_ = d.memory;
        backward_data_conv_.set_math_type(d.mathType);

        const auto w = first_usable<cudnnConvolutionBwdFilterAlgoPerf_t>(
            h, cudnnGetConvolutionBackwardFilterAlgorithmMaxCount,
            [&](int count, int* returned, cudnnConvolutionBwdFilterAlgoPerf_t* results) {
                return find ? cudnnFindConvolutionBackwardFilterAlgorithm(
                                  h, x_tensor_.get(), y_tensor_.get(), backward_filter_conv_.get(),
                                  filter_.get(), count, returned, results)
                            : cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                                  h, x_tensor_.get(), y_tensor_.get(), backward_filter_conv_.get(),
                                  filter_.get(), count, returned, results);
            },
            needs, "backward-filter");
        backward_filter_algo_ = w.algo;
        backward_filter_bytes_ = w.memory;
        backward_filter_conv_.set_math_type(w.mathType);

        ctx_.reserve_workspace(
            std::max({forward_bytes_, backward_data_bytes_, backward_filter_bytes_}));
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
    DeviceBuffer y_, dx_;
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
