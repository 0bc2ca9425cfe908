// LAMB against updates worked out by hand from the formulas (You et al. 2019, with Adam's bias
// correction), t = 1 on the first step:
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   r = (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps);  u = r + wd w
//   trust = ||w|| / ||u|| per tensor (1 if either is 0 or the tensor is excluded),
//   clamped to trust_clamp when > 0;  w = w - lr * trust * u
// On the first step bias correction makes r = g / (|g| + eps), i.e. sign(g) here: every number
// below follows from that and the betas 0.5 / 0.75 chosen for short decimals.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "optim/lamb.h"
#include "optim/make_optimizer.h"
#include "optimizer_test_support.h"
#include "train/run_spec.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::OptimizerKind;
using scalelab::RunSpec;
using scalelab::optim::Lamb;
using scalelab::optim::LambConfig;
using scalelab::optim::Optimizer;
using scalelab::optim::ParamRole;
using scalelab::optim::ParamSegment;

using scalelab::testing::all_finite;
using scalelab::testing::check_bad_steps_rejected;
using scalelab::testing::construction_error;
using scalelab::testing::near;
using scalelab::testing::weight_and_bias;

namespace {

LambConfig small_eps() {
    LambConfig config;
    config.eps = 1e-8;  // far below the tolerance: r = sign(g) on the first step
    return config;
}

}  // namespace

class TestLamb : public QObject {
    Q_OBJECT

  private slots:
    void name() {
        Lamb lamb(weight_and_bias(), LambConfig{});
        QCOMPARE(std::string(lamb.name()), std::string("lamb"));
        QCOMPARE(lamb.first_moment().size(), std::size_t{4});
        QCOMPARE(lamb.second_moment().size(), std::size_t{4});
        CHECK_VALUES(lamb.trust_ratios(), 1.0, 1.0);
    }

    void first_step_bias_correction() {
        LambConfig config = small_eps();
        config.beta1 = 0.9;
        config.beta2 = 0.999;
        Lamb lamb(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 1.0f, -2.0f};
        const std::vector<float> g{0.6f, -0.8f, 0.25f, 0.5f};
        // m = 0.1 g, v = 0.001 g^2; corrected: mhat = g, vhat = g^2, r = sign(g) (without the
        // correction r would be 0.1 / sqrt(0.001) = 3.16 times larger).
        // weight: u = [1, -1], trust = 5 / sqrt(2); w = [3 - 0.01 * 5 / sqrt 2, 4 + same].
        // bias (not adapted by default): trust 1, u = [1, 1]; b = [0.99, -2.01].
        lamb.step(p, g, 0.01);
        CHECK_VALUES(lamb.first_moment(), 0.06, -0.08, 0.025, 0.05);
        CHECK_VALUES(lamb.second_moment(), 0.00036, 0.00064, 0.0000625, 0.00025);
        CHECK_VALUES(lamb.trust_ratios(), 5 / std::sqrt(2.0), 1.0);
        CHECK_VALUES(p, 3 - 0.05 / std::sqrt(2.0), 4 + 0.05 / std::sqrt(2.0), 0.99, -2.01);
    }

    void two_steps_with_decay() {
        LambConfig config = small_eps();
        config.beta1 = 0.5;
        config.beta2 = 0.75;
        config.weight_decay = 0.1;
        Lamb lamb({{"w", ParamRole::Weight, 0, 2}}, config);
        std::vector<float> p{3.0f, 4.0f};
        std::vector<float> g{0.6f, -0.8f};
        // step 1, lr 0.1: r = [1, -1]; u = r + 0.1 [3, 4] = [1.3, -0.6], ||u|| = sqrt(2.05);
        // trust = 5 / sqrt(2.05) = 3.49215; w = w - 0.1 * trust * u.
        const double trust1 = 5 / std::sqrt(2.05);
        const double w0 = 3 - 0.1 * trust1 * 1.3;  // 2.546020
        const double w1 = 4 + 0.1 * trust1 * 0.6;  // 4.209529
        lamb.step(p, g, 0.1);
        CHECK_VALUES(lamb.trust_ratios(), trust1);
        CHECK_VALUES(p, w0, w1);
        // step 2, g = [0.6, 0]; 1 - b1^2 = 0.75, 1 - b2^2 = 0.4375.
        // float 0: m = 0.5 * 0.3 + 0.3 = 0.45, mhat = 0.6; v = 0.75 * 0.09 + 0.25 * 0.36 =
        //   0.1575, vhat = 0.36; r = 0.6 / 0.6 = 1.
        // float 1: m = 0.5 * -0.4 = -0.2, mhat = -0.2 / 0.75; v = 0.75 * 0.16 = 0.12,
        //   vhat = 0.12 / 0.4375; r = (-0.2 / 0.75) / sqrt(0.12 / 0.4375) = -0.509175.
        g = {0.6f, 0.0f};
        lamb.step(p, g, 0.1);
        CHECK_VALUES(lamb.first_moment(), 0.45, -0.2);
        CHECK_VALUES(lamb.second_moment(), 0.1575, 0.12);
        const double r1 = (-0.2 / 0.75) / std::sqrt(0.12 / 0.4375);
        const double u0 = 1 + 0.1 * w0;
        const double u1 = r1 + 0.1 * w1;
        const double trust2 = std::hypot(w0, w1) / std::hypot(u0, u1);
        CHECK_VALUES(lamb.trust_ratios(), trust2);
        CHECK_VALUES(p, w0 - 0.1 * trust2 * u0, w1 - 0.1 * trust2 * u1);
    }

    void decay_and_adaptation_switches_data() {
        QTest::addColumn<bool>("decayNormAndBias");
        QTest::addColumn<bool>("adaptNormAndBias");
        QTest::addColumn<double>("bias0");
        QTest::addColumn<double>("bias1");
        QTest::addColumn<double>("biasTrust");
        // bias b = [0.6, 0.8] (||b|| = 1), g = [0.4, -0.3]: r = [1, -1]; wd 0.1, lr 0.1.
        // neither: u = [1, -1], trust 1; b = [0.5, 0.9].
        QTest::newRow("neither") << false << false << 0.5 << 0.9 << 1.0;
        // decay only: u = [1.06, -0.92], trust 1; b = [0.494, 0.892].
        QTest::newRow("decay") << true << false << 0.494 << 0.892 << 1.0;
        // adapt only: u = [1, -1], trust = 1 / sqrt(2).
        QTest::newRow("adapt") << false << true << 0.6 - 0.1 / std::sqrt(2.0)
                               << 0.8 + 0.1 / std::sqrt(2.0) << 1 / std::sqrt(2.0);
        // both: u = [1.06, -0.92], ||u|| = sqrt(1.97), trust = 1 / sqrt(1.97).
        QTest::newRow("both") << true << true << 0.6 - 0.106 / std::sqrt(1.97)
                              << 0.8 + 0.092 / std::sqrt(1.97) << 1 / std::sqrt(1.97);
    }

    void decay_and_adaptation_switches() {
        QFETCH(bool, decayNormAndBias);
        QFETCH(bool, adaptNormAndBias);
        QFETCH(double, bias0);
        QFETCH(double, bias1);
        QFETCH(double, biasTrust);
        LambConfig config = small_eps();
        config.weight_decay = 0.1;
        config.decay_norm_and_bias = decayNormAndBias;
        config.adapt_norm_and_bias = adaptNormAndBias;
        Lamb lamb(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 0.6f, 0.8f};
        const std::vector<float> g{0.6f, -0.8f, 0.4f, -0.3f};
        // weight, whatever the switches: as step 1 of two_steps_with_decay.
        const double trust = 5 / std::sqrt(2.05);
        lamb.step(p, g, 0.1);
        CHECK_VALUES(lamb.trust_ratios(), trust, biasTrust);
        CHECK_VALUES(p, 3 - 0.13 * trust, 4 + 0.06 * trust, bias0, bias1);
    }

    void zero_weights_and_gradients() {
        LambConfig config = small_eps();
        config.weight_decay = 0.1;
        config.adapt_norm_and_bias = true;
        std::vector<ParamSegment> segments{{"zero_w", ParamRole::Weight, 0, 2},
                                           {"zero_g", ParamRole::Weight, 2, 2},
                                           {"zero_both", ParamRole::Bias, 4, 2}};
        Lamb lamb(segments, config);
        std::vector<float> p{0.0f, 0.0f, 3.0f, 4.0f, 0.0f, 0.0f};
        const std::vector<float> g{1.0f, -2.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        // lr 0.1.
        // zero_w: u = [1, -1] + 0.1 * 0; ||w|| = 0, so trust 1; w = [-0.1, 0.1].
        // zero_g: m = v = 0, r = 0 / (0 + eps) = 0, u = 0.1 w; trust = 5 / 0.5 = 10;
        //   w = w - 0.1 * 10 * 0.1 w = 0.9 w = [2.7, 3.6].
        // zero_both: u = 0, trust 1, stays 0.
        lamb.step(p, g, 0.1);
        QVERIFY(all_finite(p));
        CHECK_VALUES(lamb.trust_ratios(), 1.0, 10.0, 1.0);
        CHECK_VALUES(p, -0.1, 0.1, 2.7, 3.6, 0.0, 0.0);
    }

    void trust_clamp_data() {
        QTest::addColumn<double>("clamp");
        QTest::addColumn<double>("trust");      // of [3, 4]: 5 / sqrt(2) = 3.54 unclamped
        QTest::addColumn<double>("zeroTrust");  // of the zero tensor: 1 unclamped
        QTest::newRow("no clamp") << 0.0 << 5 / std::sqrt(2.0) << 1.0;
        QTest::newRow("clamp 2") << 2.0 << 2.0 << 1.0;
        QTest::newRow("clamp 0.5") << 0.5 << 0.5 << 0.5;
    }

    void trust_clamp() {
        QFETCH(double, clamp);
        QFETCH(double, trust);
        QFETCH(double, zeroTrust);
        LambConfig config = small_eps();
        config.trust_clamp = clamp;
        std::vector<ParamSegment> segments{{"w", ParamRole::Weight, 0, 2},
                                           {"zero", ParamRole::Weight, 2, 2}};
        Lamb lamb(segments, config);
        std::vector<float> p{3.0f, 4.0f, 0.0f, 0.0f};
        const std::vector<float> g{0.6f, -0.8f, 1.0f, 1.0f};
        // u = sign(g) everywhere; w = w - 0.01 * trust * u.
        lamb.step(p, g, 0.01);
        CHECK_VALUES(lamb.trust_ratios(), trust, zeroTrust);
        CHECK_VALUES(p, 3 - 0.01 * trust, 4 + 0.01 * trust, -0.01 * zeroTrust, -0.01 * zeroTrust);
    }

    void long_tensor_every_float() {
        // Long enough for the vectorised body, the reductions and a scalar tail. w = 1 and
        // g = +-0.5: r = +-1, ||u|| = ||w|| = sqrt(n), trust 1; w = 1 -+ 0.01.
        const std::size_t n = 1003;
        Lamb lamb({{"w", ParamRole::Weight, 0, n}}, small_eps());
        std::vector<float> p(n, 1.0f);
        std::vector<float> g(n);
        for (std::size_t i = 0; i < n; ++i) {
            g[i] = (i % 3 == 0) ? 0.5f : -0.5f;
        }
        lamb.step(p, g, 0.01);
        CHECK_VALUES(lamb.trust_ratios(), 1.0);
        for (std::size_t i = 0; i < n; ++i) {
            QVERIFY2(near(p[i], (i % 3 == 0) ? 0.99 : 1.01), qPrintable(QString::number(i)));
        }
    }

    void invalid_configs_rejected_data() {
        QTest::addColumn<double>("beta1");
        QTest::addColumn<double>("beta2");
        QTest::addColumn<double>("eps");
        QTest::addColumn<double>("weightDecay");
        QTest::addColumn<double>("clamp");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("beta1 1") << 1.0 << 0.999 << 1e-6 << 0.0 << 0.0 << "[0, 1)";
        QTest::newRow("negative beta1") << -0.1 << 0.999 << 1e-6 << 0.0 << 0.0 << "[0, 1)";
        QTest::newRow("nan beta1") << std::nan("") << 0.999 << 1e-6 << 0.0 << 0.0 << "[0, 1)";
        QTest::newRow("beta2 1") << 0.9 << 1.0 << 1e-6 << 0.0 << 0.0 << "[0, 1)";
        QTest::newRow("eps 0") << 0.9 << 0.999 << 0.0 << 0.0 << 0.0 << "> 0";
        QTest::newRow("negative eps") << 0.9 << 0.999 << -1e-6 << 0.0 << 0.0 << "> 0";
        QTest::newRow("negative decay") << 0.9 << 0.999 << 1e-6 << -0.01 << 0.0 << ">= 0";
        QTest::newRow("negative clamp") << 0.9 << 0.999 << 1e-6 << 0.0 << -1.0 << "> 0";
    }

    void invalid_configs_rejected() {
        QFETCH(double, beta1);
        QFETCH(double, beta2);
        QFETCH(double, eps);
        QFETCH(double, weightDecay);
        QFETCH(double, clamp);
        QFETCH(QString, mentions);
        LambConfig config;
        config.beta1 = beta1;
        config.beta2 = beta2;
        config.eps = eps;
        config.weight_decay = weightDecay;
        config.trust_clamp = clamp;
        const std::string message = construction_error<Lamb>(config);
        QVERIFY2(message.find(mentions.toStdString()) != std::string::npos, message.c_str());
    }

    void bad_buffers_rejected() {
        Lamb lamb(weight_and_bias(), LambConfig{});
        check_bad_steps_rejected(lamb, -1.0);
    }

    void from_spec() {
        RunSpec spec;
        spec.optimizer = OptimizerKind::Lamb;
        spec.beta1 = 0.8;
        spec.beta2 = 0.99;
        spec.eps = 1e-6;
        spec.weight_decay = 0.01;
        spec.trust_clamp = 10.0;
        spec.decay_norm_and_bias = false;
        spec.adapt_norm_and_bias = true;
        std::unique_ptr<Optimizer> optimizer =
            scalelab::optim::make_optimizer(spec, weight_and_bias());
        QCOMPARE(std::string(optimizer->name()), std::string("lamb"));
        const auto* lamb = dynamic_cast<const Lamb*>(optimizer.get());
        QVERIFY(lamb != nullptr);
        QCOMPARE(lamb->config().beta1, 0.8);
        QCOMPARE(lamb->config().beta2, 0.99);
        QCOMPARE(lamb->config().eps, 1e-6);
        QCOMPARE(lamb->config().weight_decay, 0.01);
        QCOMPARE(lamb->config().trust_clamp, 10.0);
        QCOMPARE(lamb->config().decay_norm_and_bias, false);
        QCOMPARE(lamb->config().adapt_norm_and_bias, true);
    }
};

QTEST_APPLESS_MAIN(TestLamb)
#include "test_lamb.moc"
