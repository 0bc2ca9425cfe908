// Synchronised batch norm on the GPU (SyncBatchNormKernel gives the formulas), the arithmetic of
// the CPU backend's (cpu/sync_batch_norm.cpp): sums in double, first per plane (n, c) of H * W
// values, one block each, then per channel over n in order, so the results do not depend on the
// schedule and repeat bit for bit. The host numbers of the layer (global mean and variance, global
// gradient sums) go through a host copy the kernel owns to one small device buffer; the per-channel
// coefficients are made from them by a kernel over the channels, then one elementwise pass applies
// them.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/module/block_reduce.cuh"
#include "backend/cuda/module/gpu_kernels.h"
#include "backend/cuda/module/library_errors.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

// One block per plane p = n * channels + c of x (H * W contiguous floats): two sums of
// terms(p, element) into partial[2p] and partial[2p + 1].
template <class Terms>
__global__ void plane_sums(Terms terms, std::int64_t hw, double* partial) {
    const std::int64_t plane = blockIdx.x;
    double a = 0, b = 0;
    for (std::int64_t i = threadIdx.x; i < hw; i += blockDim.x)
        terms(plane, plane * hw + i, a, b);
    a = block_sum(a);
    b = block_sum(b);
    if (threadIdx.x == 0) {
        partial[2 * plane] = a;
        partial[2 * plane + 1] = b;
    }
}

// sum x and sum x^2.
struct MomentTerms {
    const float* x;
    __device__ void operator()(std::int64_t, std::int64_t at, double& s, double& q) const {
        const double v = x[at];
        s += v;
        q += v * v;
    }
};

// sum dy and sum dy xhat, dy masked where the fused ReLU output 0.
struct GradientTerms {
    const float* x;
    const float* y;
    const float* dy;
    const double* mean;
    const double* inv_std;
    int channels;
    bool relu;
    __device__ void operator()(std::int64_t plane, std::int64_t at, double& s, double& t) const {
        const int c = int(plane % channels);
        const double d = relu && y[at] == 0.0f ? 0.0 : double(dy[at]);
        s += d;
        t += d * (double(x[at]) - mean[c]) * inv_std[c];
    }
};

// Channel c's two sums of partial, added over n in order.
__device__ void channel_totals(const double* partial, int batch, int channels, int c, double& a,
                               double& b) {
    a = 0;
    b = 0;
    for (int n = 0; n < batch; ++n) {
        const std::int64_t plane = std::int64_t(n) * channels + c;
        a += partial[2 * plane];
        b += partial[2 * plane + 1];
    }
}

// mean = sum x / count, var = sum x^2 / count - mean^2 (biased; in double, so the cancellation
// costs nothing at float precision): mean_var[c], mean_var[channels + c].
__global__ void finish_moments(const double* partial, int batch, int channels, double count,
                               float* mean_var) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < channels; c += gridDim.x * blockDim.x) {
        double s, q;
        channel_totals(partial, batch, channels, c, s, q);
        const double mean = s / count;
        mean_var[c] = float(mean);
        mean_var[channels + c] = float(fmax(0.0, q / count - mean * mean));
    }
}

// sums[c] = dshift[c] = sum dy, sums[channels + c] = dscale[c] = sum dy xhat.
__global__ void finish_gradient_sums(const double* partial, int batch, int channels, float* sums,
                                     float* dscale, float* dshift) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < channels; c += gridDim.x * blockDim.x) {
        double s, t;
        channel_totals(partial, batch, channels, c, s, t);
        sums[c] = float(s);
        sums[channels + c] = float(t);
        dshift[c] = float(s);
        dscale[c] = float(t);
    }
}

// From the global mean and variance (mean_var as finish_moments writes it): the per-channel
// mean and 1 / sqrt(var + eps) in double, and PyTorch's running-statistics update with the
// unbiased variance var * unbias, unbias = n / (n - 1).
__global__ void prepare_forward(const float* mean_var, int channels, float eps, float momentum,
                                double unbias, double* mean, double* inv_std, float* running_mean,
                                float* running_var) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < channels; c += gridDim.x * blockDim.x) {
        const float m = momentum;
        const float batch_mean = mean_var[c];
        const float batch_var = mean_var[channels + c];
        mean[c] = batch_mean;
        inv_std[c] = 1.0 / sqrt(double(batch_var) + double(eps));
        running_mean[c] = (1 - m) * running_mean[c] + m * batch_mean;
        running_var[c] = float((1 - m) * running_var[c] + m * double(batch_var) * unbias);
    }
}

// y = gamma xhat + beta (then relu when fused, NaN passing through as in relu_forward),
// xhat = (x - mean) / sqrt(var + eps).
__global__ void normalize(const float* x, const float* scale, const float* shift,
                          const double* mean, const double* inv_std, std::int64_t hw, int channels,
                          bool relu, std::size_t count, float* y) {
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const int c = int((i / hw) % channels);
        const float xhat = float((double(x[i]) - mean[c]) * inv_std[c]);
        const float v = scale[c] * xhat + shift[c];
        y[i] = relu && !(v > 0.0f || isnan(v)) ? 0.0f : v;
    }
}

// dx = k (dy - a - xhat b) with k = gamma / sigma, a = sum(dy) / n, b = sum(dy xhat) / n (the
// global sums and count): coef[c], coef[channels + c], coef[2 channels + c].
__global__ void prepare_backward(const float* scale, const float* global_sums,
                                 const double* inv_std, double n, int channels, float* coef) {
    for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < channels; c += gridDim.x * blockDim.x) {
        coef[c] = float(double(scale[c]) * inv_std[c]);
        coef[channels + c] = float(double(global_sums[c]) / n);
        coef[2 * channels + c] = float(double(global_sums[channels + c]) / n);
    }
}

__global__ void normalize_backward(const float* x, const float* y, const float* dy,
                                   const double* mean, const double* inv_std, const float* coef,
                                   std::int64_t hw, int channels, bool relu, std::size_t count,
                                   float* dx) {
    const float* k = coef;
    const float* a = coef + channels;
    const float* b = coef + 2 * channels;
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x) {
        const int c = int((i / hw) % channels);
        const float d = relu && y[i] == 0.0f ? 0.0f : dy[i];
        const float xhat = float((double(x[i]) - mean[c]) * inv_std[c]);
        dx[i] = k[c] * (d - a[c] - xhat * b[c]);
    }
}

class GpuSyncBatchNorm final : public SyncBatchNormKernel {
  public:
    GpuSyncBatchNorm(GpuContext& ctx, const BatchNormConfig& cfg, const TensorDesc& x)
        : ctx_(ctx),
          cfg_(cfg),
          desc_(x),
          hw_(std::int64_t(x.shape.h) * x.shape.w),
          planes_(std::int64_t(x.shape.n) * x.shape.c),
          y_(ctx.allocate(x.shape.numel())),
          dx_(ctx.allocate(x.shape.numel())),
          partial_(ctx.allocate(2 * doubles(std::size_t(planes_)))),
          mean_(ctx.allocate(doubles(std::size_t(cfg.channels)))),
          inv_std_(ctx.allocate(doubles(std::size_t(cfg.channels)))),
          channel_pair_(ctx.allocate(2 * std::size_t(cfg.channels))),
          coef_(ctx.allocate(3 * std::size_t(cfg.channels))),
          staged_(2 * std::size_t(cfg.channels)) {}

    double local_count() const override { return double(desc_.shape.n) * double(hw_); }

    void local_moments(const Tensor& x, std::span<float> mean_var) override {
        require_pair(mean_var.size(), "local_moments");
        x_ = x.data;
        plane_sums<<<unsigned(planes_), kThreadsPerBlock, 0, ctx_.stream()>>>(MomentTerms{x_}, hw_,
                                                                              partial());
        check_launch("sync batch norm plane moments");
        finish_moments<<<blocks_for(channels()), kThreadsPerBlock, 0, ctx_.stream()>>>(
            partial(), desc_.shape.n, cfg_.channels, local_count(), channel_pair_.data());
        check_launch("sync batch norm moments");
        download_pair(mean_var);
    }

    Tensor forward(const float* mean, const float* var, double n, const float* scale,
                   const float* shift, float* running_mean, float* running_var) override {
        std::copy(mean, mean + cfg_.channels, staged_.begin());
        std::copy(var, var + cfg_.channels, staged_.begin() + cfg_.channels);
        upload_pair();
        const double unbias = n > 1 ? n / (n - 1) : 1.0;
        prepare_forward<<<blocks_for(channels()), kThreadsPerBlock, 0, ctx_.stream()>>>(
            channel_pair_.data(), cfg_.channels, cfg_.eps, cfg_.momentum, unbias, mean_data(),
            inv_std_data(), running_mean, running_var);
        check_launch("sync batch norm forward statistics");
        normalize<<<blocks_for(count()), kThreadsPerBlock, 0, ctx_.stream()>>>(
            x_, scale, shift, mean_data(), inv_std_data(), hw_, cfg_.channels, cfg_.fused_relu,
            count(), y_.data());
        check_launch("sync batch norm forward");
        return Tensor{desc_, y_.data()};
    }

    void gradient_sums(const Tensor& dy, float* dscale, float* dshift,
                       std::span<float> sums) override {
        require_pair(sums.size(), "gradient_sums");
        dy_ = dy.data;
        const GradientTerms terms{
            x_, y_.data(), dy_, mean_data(), inv_std_data(), cfg_.channels, cfg_.fused_relu};
        plane_sums<<<unsigned(planes_), kThreadsPerBlock, 0, ctx_.stream()>>>(terms, hw_,
                                                                              partial());
        check_launch("sync batch norm plane gradient sums");
        finish_gradient_sums<<<blocks_for(channels()), kThreadsPerBlock, 0, ctx_.stream()>>>(
            partial(), desc_.shape.n, cfg_.channels, channel_pair_.data(), dscale, dshift);
        check_launch("sync batch norm gradient sums");
        download_pair(sums);
    }

    Tensor backward(const float* scale, std::span<const float> global_sums, double n) override {
        require_pair(global_sums.size(), "backward");
        std::copy(global_sums.begin(), global_sums.end(), staged_.begin());
        upload_pair();
        prepare_backward<<<blocks_for(channels()), kThreadsPerBlock, 0, ctx_.stream()>>>(
            scale, channel_pair_.data(), inv_std_data(), n, cfg_.channels, coef_.data());
        check_launch("sync batch norm backward coefficients");
        normalize_backward<<<blocks_for(count()), kThreadsPerBlock, 0, ctx_.stream()>>>(
            x_, y_.data(), dy_, mean_data(), inv_std_data(), coef_.data(), hw_, cfg_.channels,
            cfg_.fused_relu, count(), dx_.data());
        check_launch("sync batch norm backward");
        return Tensor{desc_, dx_.data()};
    }

  private:
    // Floats of device memory that hold `n` doubles (cudaMalloc aligns every buffer to 256).
    static std::size_t doubles(std::size_t n) { return 2 * n; }

    std::size_t channels() const { return std::size_t(cfg_.channels); }
    std::size_t count() const { return desc_.shape.numel(); }
    double* partial() const { return reinterpret_cast<double*>(partial_.data()); }
    double* mean_data() const { return reinterpret_cast<double*>(mean_.data()); }
    double* inv_std_data() const { return reinterpret_cast<double*>(inv_std_.data()); }

    void require_pair(std::size_t size, const char* phase) const {
        if (size != 2 * channels())
            throw Error(ErrorKind::Internal, std::string("sync batch norm ") + phase + " needs " +
                                                 std::to_string(2 * channels()) +
                                                 " host values, got " + std::to_string(size));
    }

    // channel_pair_ (2 * channels floats) to the host, once the stream got there.
    void download_pair(std::span<float> host) {
        check_cuda(cudaMemcpyAsync(host.data(), channel_pair_.data(), host.size_bytes(),
                                   cudaMemcpyDeviceToHost, ctx_.stream()),
                   "cudaMemcpyAsync of sync batch norm sums to the host");
        ctx_.synchronize();
    }

    // staged_ to channel_pair_. staged_ is the kernel's own, so the caller's array may change as
    // soon as the call returns; it is written again only in the next phase, after the
    // synchronisation of gradient_sums or local_moments.
    void upload_pair() {
        check_cuda(
            cudaMemcpyAsync(channel_pair_.data(), staged_.data(), staged_.size() * sizeof(float),
                            cudaMemcpyHostToDevice, ctx_.stream()),
            "cudaMemcpyAsync of sync batch norm statistics to the GPU");
    }

    GpuContext& ctx_;
    BatchNormConfig cfg_;
    TensorDesc desc_;  // of the input, the output and dx alike
    std::int64_t hw_;
    std::int64_t planes_;  // n * channels
    DeviceBuffer y_, dx_;
    DeviceBuffer partial_;         // doubles: per plane, its two sums
    DeviceBuffer mean_, inv_std_;  // doubles per channel, of the global statistics
    DeviceBuffer channel_pair_;    // 2 * channels floats to or from the host
    DeviceBuffer coef_;            // backward's k, a, b per channel
    std::vector<float> staged_;    // host copy of the numbers for channel_pair_
    const float* x_ = nullptr;     // of local_moments, for forward and backward
    const float* dy_ = nullptr;    // of gradient_sums, for backward
};

}  // namespace

std::unique_ptr<SyncBatchNormKernel> make_sync_batch_norm(GpuContext& ctx,
                                                          const BatchNormConfig& cfg,
                                                          const TensorDesc& x) {
    require_plain(x, "sync batch norm");
    if (x.shape.c != cfg.channels || x.shape.numel() == 0)
        throw Error(ErrorKind::Internal, "sync batch norm of " + std::to_string(cfg.channels) +
                                             " channels was given a " + x.shape.str() + " input");
    return std::make_unique<GpuSyncBatchNorm>(ctx, cfg, x);
}

}  // namespace scalelab::cuda
