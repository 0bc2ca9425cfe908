// NovoGrad against updates worked out by hand from the formulas (Ginsburg et al. 2019, as
// NVIDIA's NeMo/Apex), per tensor, t = 1 on the first step:
//   v = ||g||^2 (t = 1), then v = b2 v + (1 - b2) ||g||^2
//   d = g / (sqrt(v) + eps) + wd w;  m = b1 m + (grad_averaging ? 1 - b1 : 1) d;  w = w - lr m
// Bias/BN tensors not adapted (the default) keep v per float: v_i = g_i^2, then the average.
// eps is 1e-8 throughout, far below the tolerance; beta2 0.5 keeps the decimals short.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "optim/make_optimizer.h"
#include "optim/novograd.h"
#include "optimizer_test_support.h"
#include "train/run_spec.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::OptimizerKind;
using scalelab::RunSpec;
using scalelab::optim::NovoGrad;
using scalelab::optim::NovoGradConfig;
using scalelab::optim::Optimizer;
using scalelab::optim::ParamRole;
using scalelab::optim::ParamSegment;

using scalelab::testing::all_finite;
using scalelab::testing::check_bad_steps_rejected;
using scalelab::testing::construction_error;
using scalelab::testing::near;
using scalelab::testing::weight_and_bias;

namespace {

NovoGradConfig base() {
    NovoGradConfig config;
    config.beta1 = 0.9;
    config.beta2 = 0.5;
    config.eps = 1e-8;
    return config;
}

}  // namespace

class TestNovoGrad : public QObject {
    Q_OBJECT

  private slots:
    void name() {
        NovoGrad novograd(weight_and_bias(), NovoGradConfig{});
        QCOMPARE(std::string(novograd.name()), std::string("novograd"));
        QCOMPARE(novograd.first_moment().size(), std::size_t{4});
        CHECK_VALUES(novograd.tensor_second_moments(), 0.0, 0.0);
    }

    void two_steps() {
        NovoGrad novograd(weight_and_bias(), base());
        std::vector<float> p{3.0f, 4.0f, 1.0f, 2.0f};
        std::vector<float> g{0.6f, 0.8f, 0.5f, -0.25f};
        // step 1, lr 0.1.
        // weight: v = ||g||^2 = 1 (no average with 0 on the first step); d = g; m = d;
        //   w = [3 - 0.06, 4 - 0.08] = [2.94, 3.92].
        // bias, per float: v = g^2, d = sign(g) = [1, -1] = m; b = [0.9, 2.1].
        novograd.step(p, g, 0.1);
        CHECK_VALUES(novograd.tensor_second_moments(), 1.0, 0.0);
        CHECK_VALUES(novograd.first_moment(), 0.6, 0.8, 1.0, -1.0);
        CHECK_VALUES(p, 2.94, 3.92, 0.9, 2.1);
        // step 2, g = [0, 2, 0.5, 0.5].
        // weight: v = 0.5 * 1 + 0.5 * 4 = 2.5; d = [0, 2 / sqrt(2.5)] = [0, 1.264911];
        //   m = [0.54, 0.72 + 1.264911]; w = [2.94 - 0.054, 3.92 - 0.1 * 1.984911].
        // bias: v = [0.5 * 0.25 + 0.5 * 0.25, 0.5 * 0.0625 + 0.5 * 0.25] = [0.25, 0.15625];
        //   d = [0.5 / 0.5, 0.5 / sqrt(0.15625)] = [1, 1.264911];
        //   m = [0.9 + 1, -0.9 + 1.264911]; b = [0.9 - 0.19, 2.1 - 0.1 * 0.364911].
        g = {0.0f, 2.0f, 0.5f, 0.5f};
        novograd.step(p, g, 0.1);
        const double d = 2 / std::sqrt(2.5);
        CHECK_VALUES(novograd.tensor_second_moments(), 2.5, 0.0);
        CHECK_VALUES(novograd.first_moment(), 0.54, 0.72 + d, 1.9, -0.9 + d);
        CHECK_VALUES(p, 2.886, 3.92 - 0.1 * (0.72 + d), 0.71, 2.1 - 0.1 * (-0.9 + d));
    }

    void grad_averaging() {
        NovoGradConfig config = base();
        config.grad_averaging = true;
        NovoGrad novograd({{"w", ParamRole::Weight, 0, 2}}, config);
        std::vector<float> p{3.0f, 4.0f};
        std::vector<float> g{0.6f, 0.8f};
        // step 1: d = g; m = 0.1 d = [0.06, 0.08]; w = [2.994, 3.992].
        novograd.step(p, g, 0.1);
        CHECK_VALUES(novograd.first_moment(), 0.06, 0.08);
        CHECK_VALUES(p, 2.994, 3.992);
        // step 2, g = [0, 2]: d = [0, 2 / sqrt(2.5)]; m = [0.054, 0.072 + 0.1 d1];
        // w = [2.994 - 0.0054, 3.992 - 0.1 m1].
        g = {0.0f, 2.0f};
        novograd.step(p, g, 0.1);
        const double m1 = 0.072 + 0.2 / std::sqrt(2.5);
        CHECK_VALUES(novograd.first_moment(), 0.054, m1);
        CHECK_VALUES(p, 2.9886, 3.992 - 0.1 * m1);
    }

    void decay_and_adaptation_switches_data() {
        QTest::addColumn<bool>("decayNormAndBias");
        QTest::addColumn<bool>("adaptNormAndBias");
        QTest::addColumn<double>("bias0");
        QTest::addColumn<double>("bias1");
        QTest::addColumn<double>("biasV");
        // bias b = [0.6, 0.8], g = [0.4, -0.3] (||g||^2 = 0.25); wd 0.1, lr 0.1, m = d.
        // neither (per float): d = sign(g) = [1, -1]; b = [0.5, 0.9].
        QTest::newRow("neither") << false << false << 0.5 << 0.9 << 0.0;
        // decay only: d = [1 + 0.06, -1 + 0.08]; b = [0.494, 0.892].
        QTest::newRow("decay") << true << false << 0.494 << 0.892 << 0.0;
        // adapt only: v = 0.25, d = g / 0.5 = [0.8, -0.6]; b = [0.52, 0.86].
        QTest::newRow("adapt") << false << true << 0.52 << 0.86 << 0.25;
        // both: d = [0.8 + 0.06, -0.6 + 0.08] = [0.86, -0.52]; b = [0.514, 0.852].
        QTest::newRow("both") << true << true << 0.514 << 0.852 << 0.25;
    }

    void decay_and_adaptation_switches() {
        QFETCH(bool, decayNormAndBias);
        QFETCH(bool, adaptNormAndBias);
        QFETCH(double, bias0);
        QFETCH(double, bias1);
        QFETCH(double, biasV);
        NovoGradConfig config = base();
        config.weight_decay = 0.1;
        config.decay_norm_and_bias = decayNormAndBias;
        config.adapt_norm_and_bias = adaptNormAndBias;
        NovoGrad novograd(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 0.6f, 0.8f};
        const std::vector<float> g{1.2f, 1.6f, 0.4f, -0.3f};
        // weight, whatever the switches: v = 4, d = g / 2 + 0.1 w = [0.6 + 0.3, 0.8 + 0.4]
        // (decoupled: the decay is not divided by sqrt(v)); w = [2.91, 3.88].
        novograd.step(p, g, 0.1);
        CHECK_VALUES(novograd.tensor_second_moments(), 4.0, biasV);
        CHECK_VALUES(p, 2.91, 3.88, bias0, bias1);
    }

    void zero_weights_and_gradients() {
        NovoGradConfig config = base();
        config.weight_decay = 0.1;
        std::vector<ParamSegment> segments{{"w", ParamRole::Weight, 0, 2},
                                           {"b", ParamRole::Bias, 2, 2}};
        NovoGrad novograd(segments, config);
        std::vector<float> p(4, 0.0f);
        std::vector<float> g(4, 0.0f);
        // step 1, everything 0: v = 0, d = 0 / (0 + eps) + 0.1 * 0 = 0: nothing moves, no NaN.
        novograd.step(p, g, 0.1);
        QVERIFY(all_finite(p));
        CHECK_VALUES(novograd.tensor_second_moments(), 0.0, 0.0);
        CHECK_VALUES(p, 0.0, 0.0, 0.0, 0.0);
        // step 2, g = [3, 4, 0, 2]: weight v = 0.5 * 0 + 0.5 * 25 = 12.5, d = g / sqrt(12.5),
        //   m = d, w = -0.1 d. bias per float: v = [0, 2]; d = [0, 2 / sqrt(2)], b = -0.1 d.
        g = {3.0f, 4.0f, 0.0f, 2.0f};
        novograd.step(p, g, 0.1);
        QVERIFY(all_finite(p));
        CHECK_VALUES(novograd.tensor_second_moments(), 12.5, 0.0);
        CHECK_VALUES(p, -0.3 / std::sqrt(12.5), -0.4 / std::sqrt(12.5), 0.0, -0.2 / std::sqrt(2.0));
    }

    void invalid_configs_rejected_data() {
        QTest::addColumn<double>("beta1");
        QTest::addColumn<double>("beta2");
        QTest::addColumn<double>("eps");
        QTest::addColumn<double>("weightDecay");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("beta1 1") << 1.0 << 0.98 << 1e-8 << 0.0 << "[0, 1)";
        QTest::newRow("negative beta2") << 0.95 << -0.5 << 1e-8 << 0.0 << "[0, 1)";
        QTest::newRow("beta2 1") << 0.95 << 1.0 << 1e-8 << 0.0 << "[0, 1)";
        QTest::newRow("eps 0") << 0.95 << 0.98 << 0.0 << 0.0 << "> 0";
        QTest::newRow("nan eps") << 0.95 << 0.98 << std::nan("") << 0.0 << "> 0";
        QTest::newRow("negative decay") << 0.95 << 0.98 << 1e-8 << -0.001 << ">= 0";
    }

    void invalid_configs_rejected() {
        QFETCH(double, beta1);
        QFETCH(double, beta2);
        QFETCH(double, eps);
        QFETCH(double, weightDecay);
        QFETCH(QString, mentions);
        NovoGradConfig config;
        config.beta1 = beta1;
        config.beta2 = beta2;
        config.eps = eps;
        config.weight_decay = weightDecay;
        const std::string message = construction_error<NovoGrad>(config);
        QVERIFY2(message.find(mentions.toStdString()) != std::string::npos, message.c_str());
    }

    void bad_buffers_rejected() {
        NovoGrad novograd(weight_and_bias(), NovoGradConfig{});
        check_bad_steps_rejected(novograd, HUGE_VAL);
    }

    void from_spec() {
        RunSpec spec;
        spec.optimizer = OptimizerKind::NovoGrad;
        spec.beta1 = 0.95;
        spec.beta2 = 0.98;
        spec.eps = 1e-7;
        spec.weight_decay = 0.001;
        spec.grad_averaging = true;
        spec.decay_norm_and_bias = false;
        spec.adapt_norm_and_bias = true;
        std::unique_ptr<Optimizer> optimizer =
            scalelab::optim::make_optimizer(spec, weight_and_bias());
        QCOMPARE(std::string(optimizer->name()), std::string("novograd"));
        const auto* novograd = dynamic_cast<const NovoGrad*>(optimizer.get());
        QVERIFY(novograd != nullptr);
        QCOMPARE(novograd->config().beta1, 0.95);
        QCOMPARE(novograd->config().beta2, 0.98);
        QCOMPARE(novograd->config().eps, 1e-7);
        QCOMPARE(novograd->config().weight_decay, 0.001);
        QCOMPARE(novograd->config().grad_averaging, true);
        QCOMPARE(novograd->config().decay_norm_and_bias, false);
        QCOMPARE(novograd->config().adapt_norm_and_bias, true);
    }
};

QTEST_APPLESS_MAIN(TestNovoGrad)
#include "test_novograd.moc"
