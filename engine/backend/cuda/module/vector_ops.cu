#include "backend/cuda/module/vector_ops.h"

#include "backend/cuda/cuda_error.h"

namespace scalelab::cuda {

namespace {

// The squared-norm grid: fixed, so that every vector is cut into the same partial sums.
constexpr int kNormBlocks = 240;

__global__ void add_kernel(const float* __restrict__ from, float* __restrict__ to, std::size_t n) {
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        to[i] += from[i];
}

// partials[b] = sum of v_i^2 over the i that block b's threads visit (a grid-stride loop), each
// thread's share summed in order, then the block's threads combined by a fixed tree.
__global__ void squared_norm_partials(const float* __restrict__ v, std::size_t n,
                                      double* __restrict__ partials) {
    __shared__ double shared[kThreadsPerBlock];
    double sq = 0;
    for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n;
         i += std::size_t(gridDim.x) * blockDim.x)
        sq += double(v[i]) * v[i];
    shared[threadIdx.x] = sq;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half)
            shared[threadIdx.x] += shared[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        partials[blockIdx.x] = shared[0];
}

// One thread: sum += partials[0] + ... + partials[blocks - 1], in index order.
__global__ void add_partials(const double* __restrict__ partials, int blocks,
                             double* __restrict__ sum) {
    double total = 0;
    for (int b = 0; b < blocks; ++b)
        total += partials[b];
    *sum += total;
}

}  // namespace

void load_vector_kernels() {
    load_kernel(add_kernel, "add_kernel");
    load_kernel(squared_norm_partials, "squared_norm_partials");
    load_kernel(add_partials, "add_partials");
}

void add_vector(GpuContext& ctx, std::span<const float> from, std::span<float> to) {
    if (from.empty())
        return;
    add_kernel<<<blocks_for(from.size()), kThreadsPerBlock, 0, ctx.stream()>>>(
        from.data(), to.data(), from.size());
    check_launch("add_kernel");
}

SquaredNormAccumulator::SquaredNormAccumulator(GpuContext& ctx) : ctx_(ctx) {
    try {
        check_cuda(cudaMalloc(&partials_, kNormBlocks * sizeof(double)), "cudaMalloc");
        check_cuda(cudaMalloc(&sum_, sizeof(double)), "cudaMalloc");
        check_cuda(cudaMemsetAsync(sum_, 0, sizeof(double), ctx_.stream()), "cudaMemsetAsync");
        check_cuda(cudaMallocHost(&host_sum_, sizeof(double)), "cudaMallocHost");
    } catch (...) {
        release();  // no destructor runs for a constructor that throws
        throw;
    }
}

SquaredNormAccumulator::~SquaredNormAccumulator() {
    release();
}

void SquaredNormAccumulator::release() {
    if (host_sum_ != nullptr)
        cudaFreeHost(host_sum_);
    if (sum_ != nullptr)
        cudaFree(sum_);
    if (partials_ != nullptr)
        cudaFree(partials_);
}

void SquaredNormAccumulator::add(std::span<const float> v) {
    if (v.empty())
        return;
    squared_norm_partials<<<kNormBlocks, kThreadsPerBlock, 0, ctx_.stream()>>>(v.data(), v.size(),
                                                                               partials_);
    check_launch("squared_norm_partials");
    add_partials<<<1, 1, 0, ctx_.stream()>>>(partials_, kNormBlocks, sum_);
    check_launch("add_partials");
}

double SquaredNormAccumulator::take() {
    check_cuda(
        cudaMemcpyAsync(host_sum_, sum_, sizeof(double), cudaMemcpyDeviceToHost, ctx_.stream()),
        "cudaMemcpyAsync from the GPU");
    check_cuda(cudaMemsetAsync(sum_, 0, sizeof(double), ctx_.stream()), "cudaMemsetAsync");
    ctx_.synchronize();
    return *host_sum_;
}

}  // namespace scalelab::cuda
