// AdamW against updates worked out by hand from the formulas (Loshchilov & Hutter, as
// torch.optim.AdamW), t = 1 on the first step:
//   w = w - lr * wd * w  (decoupled);  m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   w = w - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)
// On the first step bias correction makes the update lr * g / (|g| + eps) = lr * sign(g);
// eps is 1e-8, far below the tolerance, and betas 0.5 / 0.75 keep the decimals short.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "optim/adamw.h"
#include "optim/make_optimizer.h"
#include "optimizer_test_support.h"
#include "train/run_spec.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::OptimizerKind;
using scalelab::RunSpec;
using scalelab::optim::AdamW;
using scalelab::optim::AdamWConfig;
using scalelab::optim::Optimizer;
using scalelab::optim::ParamRole;
using scalelab::optim::ParamSegment;

using scalelab::testing::all_finite;
using scalelab::testing::check_bad_steps_rejected;
using scalelab::testing::construction_error;
using scalelab::testing::near;
using scalelab::testing::weight_and_bias;

namespace {

AdamWConfig base() {
    AdamWConfig config;
    config.beta1 = 0.5;
    config.beta2 = 0.75;
    config.eps = 1e-8;
    config.weight_decay = 0.0;
    return config;
}

}  // namespace

class TestAdamW : public QObject {
    Q_OBJECT

  private slots:
    void name() {
        AdamW adamw(weight_and_bias(), AdamWConfig{});
        QCOMPARE(std::string(adamw.name()), std::string("adamw"));
        QCOMPARE(adamw.first_moment().size(), std::size_t{4});
        QCOMPARE(adamw.second_moment().size(), std::size_t{4});
    }

    void first_step_bias_correction() {
        AdamWConfig config = base();
        config.beta1 = 0.9;
        config.beta2 = 0.999;
        AdamW adamw(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 1.0f, -2.0f};
        const std::vector<float> g{0.6f, -0.8f, 0.25f, 0.5f};
        // m = 0.1 g, v = 0.001 g^2; mhat = g, vhat = g^2: w = w - 0.01 * sign(g)
        // (without the correction the step would be 0.1 / sqrt(0.001) = 3.16 times larger).
        adamw.step(p, g, 0.01);
        CHECK_VALUES(adamw.first_moment(), 0.06, -0.08, 0.025, 0.05);
        CHECK_VALUES(adamw.second_moment(), 0.00036, 0.00064, 0.0000625, 0.00025);
        CHECK_VALUES(p, 2.99, 4.01, 0.99, -2.01);
    }

    void two_steps_with_decay() {
        AdamWConfig config = base();
        config.weight_decay = 0.1;
        AdamW adamw({{"w", ParamRole::Weight, 0, 2}}, config);
        std::vector<float> p{3.0f, 4.0f};
        std::vector<float> g{0.6f, -0.8f};
        // step 1, lr 0.1: decay w = 0.99 w = [2.97, 3.96]; Adam step 0.1 * [1, -1];
        // w = [2.87, 4.06].
        adamw.step(p, g, 0.1);
        CHECK_VALUES(p, 2.87, 4.06);
        // step 2, g = [0.6, 0]; 1 - b1^2 = 0.75, 1 - b2^2 = 0.4375.
        // float 0: m = 0.15 + 0.3 = 0.45, mhat = 0.6; v = 0.0675 + 0.09 = 0.1575, vhat = 0.36;
        //   step 0.1 * 0.6 / 0.6 = 0.1; w = 2.87 * 0.99 - 0.1 = 2.8413 - 0.1 = 2.7413.
        // float 1: m = -0.2, v = 0.12; r = (-0.2 / 0.75) / sqrt(0.12 / 0.4375) = -0.509175;
        //   w = 4.06 * 0.99 + 0.0509175 = 4.0703175.
        g = {0.6f, 0.0f};
        adamw.step(p, g, 0.1);
        CHECK_VALUES(adamw.first_moment(), 0.45, -0.2);
        CHECK_VALUES(adamw.second_moment(), 0.1575, 0.12);
        CHECK_VALUES(p, 2.7413, 4.0194 - 0.1 * (-0.2 / 0.75) / std::sqrt(0.12 / 0.4375));
        QCOMPARE(adamw.steps(), std::int64_t{2});
    }

    void decay_switch_data() {
        QTest::addColumn<bool>("decayNormAndBias");
        QTest::addColumn<double>("bias0");
        QTest::addColumn<double>("bias1");
        // bias b = [0.6, 0.8], g = [0.4, -0.3]; wd 0.1, lr 0.1: Adam step 0.1 * [1, -1].
        // not decayed: b = [0.5, 0.9]; decayed first: 0.99 b = [0.594, 0.792], b = [0.494, 0.892].
        QTest::newRow("weights only") << false << 0.5 << 0.9;
        QTest::newRow("decay all") << true << 0.494 << 0.892;
    }

    void decay_switch() {
        QFETCH(bool, decayNormAndBias);
        QFETCH(double, bias0);
        QFETCH(double, bias1);
        AdamWConfig config = base();
        config.weight_decay = 0.1;
        config.decay_norm_and_bias = decayNormAndBias;
        AdamW adamw(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 0.6f, 0.8f};
        const std::vector<float> g{0.6f, -0.8f, 0.4f, -0.3f};
        // weight, always decayed: [2.97 - 0.1, 3.96 + 0.1].
        adamw.step(p, g, 0.1);
        CHECK_VALUES(p, 2.87, 4.06, bias0, bias1);
    }

    void zero_weights_and_gradients() {
        AdamWConfig config = base();
        config.weight_decay = 0.1;
        std::vector<ParamSegment> segments{{"zero_w", ParamRole::Weight, 0, 2},
                                           {"zero_g", ParamRole::Weight, 2, 2},
                                           {"zero_both", ParamRole::Bias, 4, 2}};
        AdamW adamw(segments, config);
        std::vector<float> p{0.0f, 0.0f, 3.0f, 4.0f, 0.0f, 0.0f};
        const std::vector<float> g{1.0f, -2.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        // lr 0.1. zero_w: w = 0 - 0.1 * sign(g) = [-0.1, 0.1].
        // zero_g: m = v = 0, the Adam step is 0 / (0 + eps) = 0; only the decay: [2.97, 3.96].
        // zero_both: stays 0.
        adamw.step(p, g, 0.1);
        QVERIFY(all_finite(p));
        CHECK_VALUES(p, -0.1, 0.1, 2.97, 3.96, 0.0, 0.0);
    }

    void invalid_configs_rejected_data() {
        QTest::addColumn<double>("beta1");
        QTest::addColumn<double>("beta2");
        QTest::addColumn<double>("eps");
        QTest::addColumn<double>("weightDecay");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("beta1 1") << 1.0 << 0.999 << 1e-8 << 0.0 << "[0, 1)";
        QTest::newRow("negative beta1") << -0.9 << 0.999 << 1e-8 << 0.0 << "[0, 1)";
        QTest::newRow("beta2 1.5") << 0.9 << 1.5 << 1e-8 << 0.0 << "[0, 1)";
        QTest::newRow("eps 0") << 0.9 << 0.999 << 0.0 << 0.0 << "> 0";
        QTest::newRow("negative decay") << 0.9 << 0.999 << 1e-8 << -0.01 << ">= 0";
        QTest::newRow("nan decay") << 0.9 << 0.999 << 1e-8 << std::nan("") << ">= 0";
    }

    void invalid_configs_rejected() {
        QFETCH(double, beta1);
        QFETCH(double, beta2);
        QFETCH(double, eps);
        QFETCH(double, weightDecay);
        QFETCH(QString, mentions);
        AdamWConfig config;
        config.beta1 = beta1;
        config.beta2 = beta2;
        config.eps = eps;
        config.weight_decay = weightDecay;
        const std::string message = construction_error<AdamW>(config);
        QVERIFY2(message.find(mentions.toStdString()) != std::string::npos, message.c_str());
    }

    void bad_buffers_rejected() {
        AdamW adamw(weight_and_bias(), AdamWConfig{});
        check_bad_steps_rejected(adamw, -0.5);
    }

    void from_spec() {
        RunSpec spec;
        spec.optimizer = OptimizerKind::AdamW;
        spec.beta1 = 0.85;
        spec.beta2 = 0.95;
        spec.eps = 1e-6;
        spec.weight_decay = 0.05;
        spec.decay_norm_and_bias = false;
        std::unique_ptr<Optimizer> optimizer =
            scalelab::optim::make_optimizer(spec, weight_and_bias());
        QCOMPARE(std::string(optimizer->name()), std::string("adamw"));
        const auto* adamw = dynamic_cast<const AdamW*>(optimizer.get());
        QVERIFY(adamw != nullptr);
        QCOMPARE(adamw->config().beta1, 0.85);
        QCOMPARE(adamw->config().beta2, 0.95);
        QCOMPARE(adamw->config().eps, 1e-6);
        QCOMPARE(adamw->config().weight_decay, 0.05);
        QCOMPARE(adamw->config().decay_norm_and_bias, false);
    }
};

QTEST_APPLESS_MAIN(TestAdamW)
#include "test_adamw.moc"
