// Fully connected layer on cuBLAS, all row-major as PyTorch stores it: x (n, in) (a plain
// (n, c, h, w) input is read as in = c h w features), W (out, in), y (n, out).
//   forward:  y  = x W^T + b
//   backward: dW = dy^T x,  db = sum over the batch of dy,  dx = dy W
// Each product goes to cublasSgemm through column_major_gemm (row_major_gemm.h), which gives:
//   y  = x W^T:  sgemm(T, N, m = out, n = n,   k = in,  W lda = in, x  ldb = in,  y  ldc = out)
//   dW = dy^T x: sgemm(N, T, m = in,  n = out, k = n,   x lda = in, dy ldb = out, dW ldc = in)
//   dx = dy W:   sgemm(N, N, m = in,  n = n,   k = out, W lda = in, dy ldb = out, dx ldc = in)
// cuBLAS runs them in the math mode the context set (TF32 only when asked for). The bias and
// its gradient are kernels of their own; db sums each column over the batch in order.

#include <string>

#include "backend/cuda/module/gpu_kernels.h"
#include "backend/cuda/module/library_errors.h"
#include "backend/cuda/module/row_major_gemm.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

// y[i][o] += bias[o] over the row-major (rows, features) y.
__global__ void add_bias(const float* bias, std::size_t features, std::size_t count, float* y) {
    for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
         i += std::size_t(gridDim.x) * blockDim.x)
        y[i] += bias[i % features];
}

// dbias[o] = sum_i dy[i][o], over the rows in order (in double), one thread per column.
__global__ void column_sums(const float* dy, int rows, int features, float* dbias) {
    for (int o = blockIdx.x * blockDim.x + threadIdx.x; o < features; o += gridDim.x * blockDim.x) {
        double sum = 0;
        for (int i = 0; i < rows; ++i)
            sum += dy[std::size_t(i) * features + o];
        dbias[o] = float(sum);
    }
}

class GpuLinear final : public LinearKernel {
  public:
    GpuLinear(GpuContext& ctx, const LinearConfig& cfg, const TensorDesc& x)
        : ctx_(ctx),
          cfg_(cfg),
          x_shape_(x.shape),
          y_shape_{x.shape.n, cfg.out_features, 1, 1},
          y_(ctx.allocate(y_shape_.numel())),
          dx_(ctx.allocate(x.shape.numel())) {}

    Tensor forward(const Tensor& x, const float* weight, const float* bias) override {
        x_ = x.data;
        gemm(column_major_gemm(input(), weights(weight, true)), y_.data(), "y = x W^T");
        const std::size_t count = y_shape_.numel();
        add_bias<<<blocks_for(count), kThreadsPerBlock, 0, ctx_.stream()>>>(
            bias, std::size_t(cfg_.out_features), count, y_.data());
        check_launch("linear bias");
        return Tensor{TensorDesc{y_shape_, nullptr}, y_.data()};
    }

    Tensor backward(const Tensor& dy, const float* weight, float* dweight, float* dbias,
                    bool want_dx) override {
        const RowMajorOperand gradient{dy.data, batch(), cfg_.out_features, false};
        RowMajorOperand gradient_transposed = gradient;
        gradient_transposed.transposed = true;
        gemm(column_major_gemm(gradient_transposed, input()), dweight, "dW = dy^T x");
        column_sums<<<blocks_for(std::size_t(cfg_.out_features)), kThreadsPerBlock, 0,
                      ctx_.stream()>>>(dy.data, batch(), cfg_.out_features, dbias);
        check_launch("linear bias gradient");
        if (!want_dx)
            return Tensor{};
        gemm(column_major_gemm(gradient, weights(weight, false)), dx_.data(), "dx = dy W");
        return Tensor{TensorDesc{x_shape_, nullptr}, dx_.data()};
    }

  private:
    int batch() const { return x_shape_.n; }
    RowMajorOperand input() const { return {x_, batch(), cfg_.in_features, false}; }
    RowMajorOperand weights(const float* weight, bool transposed) const {
        return {weight, cfg_.out_features, cfg_.in_features, transposed};
    }

    // c = the product `call` describes (beta = 0: written, not accumulated).
    void gemm(const ColumnMajorGemm& call, float* c, const char* product) {
        const float alpha = 1.0f, beta = 0.0f;
        check_cublas(
            cublasSgemm(ctx_.cublas(), call.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N,
                        call.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N, call.m, call.n, call.k,
                        &alpha, call.a, call.lda, call.b, call.ldb, &beta, c, call.ldc),
            std::string("cublasSgemm of the linear layer's ") + product);
    }

    GpuContext& ctx_;
    LinearConfig cfg_;
    Shape x_shape_, y_shape_;
    DeviceBuffer y_, dx_;
    const float* x_ = nullptr;  // of forward, for backward
};

}  // namespace

std::unique_ptr<LinearKernel> make_linear(GpuContext& ctx, const LinearConfig& cfg,
                                          const TensorDesc& x) {
    require_plain(x, "linear");
    if (int(x.shape.per_sample()) != cfg.in_features || cfg.out_features < 1 || x.shape.n < 1)
        throw Error(ErrorKind::Internal, "linear layer expects a plain input of " +
                                             std::to_string(cfg.in_features) + " features, got " +
                                             x.shape.str());
    return std::make_unique<GpuLinear>(ctx, cfg, x);
}

}  // namespace scalelab::cuda
