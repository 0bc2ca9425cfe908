#pragma once

// Row-major matrix products as the column-major GEMM of BLAS (cuBLAS) computes them. A row-major
// r x c matrix M (leading dimension c) is, read column-major, the c x r matrix M^T. So for
//   C = op(A) op(B)   (row-major, C is M x N, op(A) is M x K, op(B) is K x N)
// the column-major call computes C^T = op(B)^T op(A)^T: B first and A second, each with its own
// transpose flag unchanged (the column-major reading of a stored matrix is already its
// transpose), m = N, n = M, k = K, and each leading dimension the stored row length.

namespace scalelab::cuda {

// A stored row-major rows x cols matrix, used as itself or (transposed) as its transpose.
struct RowMajorOperand {
    const float* data = nullptr;
    int rows = 0;
    int cols = 0;
    bool transposed = false;
};

// The arguments of the column-major sgemm C := alpha op(a) op(b) + beta C (C is m x n).
struct ColumnMajorGemm {
    bool transpose_a = false;
    bool transpose_b = false;
    int m = 0, n = 0, k = 0;
    const float* a = nullptr;
    int lda = 0;
    const float* b = nullptr;
    int ldb = 0;
    int ldc = 0;
};

// The call that writes the row-major product op(A) op(B) (N = its row length as ldc).
constexpr ColumnMajorGemm column_major_gemm(const RowMajorOperand& A, const RowMajorOperand& B) {
    const int M = A.transposed ? A.cols : A.rows;
    const int K = A.transposed ? A.rows : A.cols;
    const int N = B.transposed ? B.rows : B.cols;
    return ColumnMajorGemm{.transpose_a = B.transposed,
                           .transpose_b = A.transposed,
                           .m = N,
                           .n = M,
                           .k = K,
                           .a = B.data,
                           .lda = B.cols,
                           .b = A.data,
                           .ldb = A.cols,
                           .ldc = N};
}

}  // namespace scalelab::cuda
