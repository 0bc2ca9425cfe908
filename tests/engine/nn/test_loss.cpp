// Softmax cross-entropy: values against hand-computed ones, and the gradient against finite
// differences, with and without label smoothing; each forward's result handed out once.

#include <QtTest>
#include <cmath>

#include "backend/cpu/cpu_backend.h"
#include "error.h"

using namespace scalelab;

namespace {

double loss_of(std::vector<float> logits, const std::vector<std::int32_t>& labels,
               float smoothing) {
    cpu::CpuBackend backend(1);
    const Shape s{int(labels.size()), int(logits.size() / labels.size()), 1, 1};
    auto k = backend.softmax_cross_entropy(TensorDesc{s, nullptr}, smoothing);
    k->forward(Tensor{TensorDesc{s, nullptr}, logits.data()}, labels);
    return k->result().loss_sum;
}

}  // namespace

class Loss : public QObject {
    Q_OBJECT

  private slots:
    void values_match_the_formula() {
        // logits (1, 2, 3), label 2: loss = log(e + e^2 + e^3) - 3.
        const double expected = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
        QVERIFY(std::abs(loss_of({1, 2, 3}, {2}, 0) - expected) < 1e-6);
        // With smoothing s over K = 3: target (s/3, s/3, 1 - s + s/3).
        const double s = 0.3, lse = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
        const double smoothed = lse - (s / 3 * 1 + s / 3 * 2 + (1 - s + s / 3) * 3);
        QVERIFY(std::abs(loss_of({1, 2, 3}, {2}, 0.3f) - smoothed) < 1e-6);
        // Stable for large logits.
        QVERIFY(std::isfinite(loss_of({1000, 0, -1000}, {1}, 0)));
    }

    void counts_correct_predictions() {
        cpu::CpuBackend backend(1);
        const Shape s{3, 2, 1, 1};
        std::vector<float> logits{2, 1, 0, 5, 3, -1};
        const std::vector<std::int32_t> labels{0, 0, 0};
        auto k = backend.softmax_cross_entropy(TensorDesc{s, nullptr}, 0);
        k->forward(Tensor{TensorDesc{s, nullptr}, logits.data()}, labels);
        QCOMPARE(k->result().correct, 2);
    }

    void a_result_needs_a_forward_of_its_own() {
        cpu::CpuBackend backend(1);
        const Shape s{2, 2, 1, 1};
        std::vector<float> logits{2, 1, 0, 5};
        const std::vector<std::int32_t> labels{0, 1};
        auto k = backend.softmax_cross_entropy(TensorDesc{s, nullptr}, 0);
        QVERIFY_THROWS_EXCEPTION(Error, k->result());
        k->forward(Tensor{TensorDesc{s, nullptr}, logits.data()}, labels);
        QCOMPARE(k->result().correct, 2);
        QVERIFY_THROWS_EXCEPTION(Error, k->result());
    }

    void gradient_matches_finite_differences_data() {
        QTest::addColumn<float>("smoothing");
        QTest::newRow("plain") << 0.0f;
        QTest::newRow("smoothed") << 0.1f;
    }
    void gradient_matches_finite_differences() {
        QFETCH(float, smoothing);
        const std::vector<std::int32_t> labels{3, 0, 9, 5};
        std::vector<float> logits(40);
        for (std::size_t i = 0; i < logits.size(); ++i)
            logits[i] = std::sin(float(i) * 1.7f) * 3;
        cpu::CpuBackend backend(1);
        const Shape s{4, 10, 1, 1};
        auto k = backend.softmax_cross_entropy(TensorDesc{s, nullptr}, smoothing);
        k->forward(Tensor{TensorDesc{s, nullptr}, logits.data()}, labels);
        const float scale = 0.25f;  // the mean over the batch
        const Tensor g = k->backward(scale);
        const std::vector<float> analytic(g.data, g.data + 40);
        for (std::size_t i = 0; i < logits.size(); ++i) {
            const float saved = logits[i];
            const double h = 1e-3;
            logits[i] = saved + float(h);
            const double plus = loss_of(logits, labels, smoothing);
            logits[i] = saved - float(h);
            const double minus = loss_of(logits, labels, smoothing);
            logits[i] = saved;
            const double numeric = scale * (plus - minus) / (2 * h);
            QVERIFY2(std::abs(numeric - analytic[i]) < 2e-4,
                     qPrintable(QString("logit %1: numeric %2 analytic %3")
                                    .arg(i)
                                    .arg(numeric)
                                    .arg(analytic[i])));
        }
    }
};

QTEST_APPLESS_MAIN(Loss)
#include "test_loss.moc"
