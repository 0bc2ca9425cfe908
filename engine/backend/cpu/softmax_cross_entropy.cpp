// Softmax cross-entropy with label smoothing s over K classes, per sample i:
//   t_j = (1 - s) [j == label] + s / K,   p = softmax(z)
//   loss_i = logsumexp(z) - sum_j t_j z_j,   d loss_i / d z_j = p_j - t_j
// computed with the max subtracted for stability, in double for the sums.

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "error.h"

namespace scalelab::cpu {

namespace {

class CpuSoftmaxCrossEntropy final : public SoftmaxCrossEntropyKernel {
  public:
    CpuSoftmaxCrossEntropy(const TensorDesc& logits, float label_smoothing)
        : shape_(logits.shape),
          classes_(logits.shape.c),
          smoothing_(label_smoothing),
          prob_(logits.shape.numel()),
          dlogits_(logits.shape.numel()) {}

    void forward(const Tensor& logits, std::span<const std::int32_t> labels) override {
        LossResult& result = result_.emplace();
        labels_.assign(labels.begin(), labels.end());
        const float off = smoothing_ / float(classes_);
        for (int i = 0; i < shape_.n; ++i) {
            const float* z = logits.data + std::size_t(i) * classes_;
            float* p = prob_.data() + std::size_t(i) * classes_;
            const int label = labels[std::size_t(i)];
            const float zmax = *std::max_element(z, z + classes_);
            double sum = 0, dot = 0;
            for (int j = 0; j < classes_; ++j) {
                p[j] = std::exp(z[j] - zmax);
                sum += p[j];
                dot += double((j == label ? 1.0f - smoothing_ : 0.0f) + off) * (z[j] - zmax);
            }
            for (int j = 0; j < classes_; ++j)
                p[j] = float(p[j] / sum);
            result.loss_sum += std::log(sum) - dot;
            if (int(std::max_element(z, z + classes_) - z) == label)
                ++result.correct;
        }
    }

    LossResult result() override {
        if (!result_)
            throw Error(ErrorKind::Internal, "the loss's result was asked for before its forward");
        return *std::exchange(result_, std::nullopt);
    }

    Tensor backward(float grad_scale) override {
        const float off = smoothing_ / float(classes_);
        for (int i = 0; i < shape_.n; ++i) {
            const float* p = prob_.data() + std::size_t(i) * classes_;
            float* g = dlogits_.data() + std::size_t(i) * classes_;
            for (int j = 0; j < classes_; ++j) {
                const float target =
                    (j == labels_[std::size_t(i)] ? 1.0f - smoothing_ : 0.0f) + off;
                g[j] = (p[j] - target) * grad_scale;
            }
        }
        return Tensor{TensorDesc{shape_, nullptr}, dlogits_.data()};
    }

  private:
    Shape shape_;
    int classes_;
    float smoothing_;
    std::vector<float> prob_, dlogits_;
    std::vector<std::int32_t> labels_;
    std::optional<LossResult> result_;  // the last forward's, until result() hands it out
};

}  // namespace

std::unique_ptr<SoftmaxCrossEntropyKernel> make_softmax_cross_entropy(const TensorDesc& logits,
                                                                      float label_smoothing) {
    if (!logits.plain() || logits.shape.h != 1 || logits.shape.w != 1)
        throw Error(ErrorKind::Internal,
                    "the loss expects plain (n, classes) logits, got " + logits.shape.str());
    return std::make_unique<CpuSoftmaxCrossEntropy>(logits, label_smoothing);
}

}  // namespace scalelab::cpu
