// LARS/LARC against updates worked out by hand from the formulas (You et al. 2017; Apex LARC):
//   local = eta * ||w|| / (||g|| + wd * ||w||)   (1 if a norm is 0 or the tensor is excluded)
//   LARC clip: local = min(local / lr, 1)
//   d = (g + wd * w) * local;  buf = momentum * buf + d;  d = nesterov ? d + momentum * buf : buf
//   w = w - lr * d
// Tensors are chosen with 3-4-5 norms so every number below is written out in the comments.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "optim/lars.h"
#include "optim/make_optimizer.h"
#include "optimizer_test_support.h"
#include "train/run_spec.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::OptimizerKind;
using scalelab::RunSpec;
using scalelab::optim::Lars;
using scalelab::optim::LarsConfig;
using scalelab::optim::Optimizer;
using scalelab::optim::ParamRole;
using scalelab::optim::ParamSegment;

using scalelab::testing::all_finite;
using scalelab::testing::construction_error;
using scalelab::testing::near;
using scalelab::testing::weight_and_bias;

namespace {

LarsConfig no_momentum() {
    LarsConfig config;
    config.momentum = 0;
    return config;
}

}  // namespace

class TestLars : public QObject {
    Q_OBJECT

  private slots:
    void name() {
        Lars lars(weight_and_bias(), LarsConfig{});
        QCOMPARE(std::string(lars.name()), std::string("lars"));
        QCOMPARE(lars.momentum_buffer().size(), std::size_t{4});
        CHECK_VALUES(lars.local_lrs(), 1.0, 1.0);
    }

    void momentum_two_steps() {
        LarsConfig config;
        config.momentum = 0.9;
        config.trust_coefficient = 0.02;
        Lars lars(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 1.0f, 2.0f};
        const std::vector<float> g{0.6f, 0.8f, 0.5f, 0.5f};
        // step 1, lr 1. weight: ||w|| = 5, ||g|| = 1, local = 0.02 * 5 / 1 = 0.1;
        // d = [0.06, 0.08] = buf; w = [2.94, 3.92].
        // bias (not adapted by default): local 1, buf = [0.5, 0.5], b = [0.5, 1.5].
        lars.step(p, g, 1.0);
        CHECK_VALUES(lars.local_lrs(), 0.1, 1.0);
        CHECK_VALUES(lars.momentum_buffer(), 0.06, 0.08, 0.5, 0.5);
        CHECK_VALUES(p, 2.94, 3.92, 0.5, 1.5);
        // step 2, lr 0.5 (the lr changed: buf holds gradients only, nothing to correct).
        // weight: ||w|| = 0.98 * 5 = 4.9, local = 0.098, d = [0.0588, 0.0784];
        // buf = [0.054 + 0.0588, 0.072 + 0.0784] = [0.1128, 0.1504];
        // w = [2.94 - 0.0564, 3.92 - 0.0752] = [2.8836, 3.8448].
        // bias: buf = 0.45 + 0.5 = 0.95; b = [0.5 - 0.475, 1.5 - 0.475] = [0.025, 1.025].
        lars.step(p, g, 0.5);
        CHECK_VALUES(lars.local_lrs(), 0.098, 1.0);
        CHECK_VALUES(lars.momentum_buffer(), 0.1128, 0.1504, 0.95, 0.95);
        CHECK_VALUES(p, 2.8836, 3.8448, 0.025, 1.025);
        QCOMPARE(lars.steps(), std::int64_t{2});
    }

    void nesterov_two_steps() {
        LarsConfig config;
        config.momentum = 0.9;
        config.nesterov = true;
        config.trust_coefficient = 0.02;
        Lars lars({{"w", ParamRole::Weight, 0, 2}}, config);
        std::vector<float> p{3.0f, 4.0f};
        const std::vector<float> g{0.6f, 0.8f};
        // step 1, lr 1: local 0.1, d = [0.06, 0.08] = buf; d + 0.9 buf = [0.114, 0.152];
        // w = [2.886, 3.848].
        lars.step(p, g, 1.0);
        CHECK_VALUES(p, 2.886, 3.848);
        // step 2: ||w|| = 0.962 * 5 = 4.81, local = 0.0962, d = [0.05772, 0.07696];
        // buf = [0.054 + 0.05772, 0.072 + 0.07696] = [0.11172, 0.14896];
        // d + 0.9 buf = [0.05772 + 0.100548, 0.07696 + 0.134064] = [0.158268, 0.211024];
        // w = [2.886 - 0.158268, 3.848 - 0.211024] = [2.727732, 3.636976].
        lars.step(p, g, 1.0);
        CHECK_VALUES(lars.momentum_buffer(), 0.11172, 0.14896);
        CHECK_VALUES(p, 2.727732, 3.636976);
    }

    void decay_and_adaptation_switches_data() {
        QTest::addColumn<bool>("decayNormAndBias");
        QTest::addColumn<bool>("adaptNormAndBias");
        QTest::addColumn<double>("bias0");
        QTest::addColumn<double>("bias1");
        QTest::addColumn<double>("biasLocal");
        // bias b = [0.6, 0.8] (||b|| = 1), g = [0.4, -0.3] (||g|| = 0.5), wd 0.04, eta 0.024,
        // lr 1, no momentum: b = b - d.
        // neither: d = g; b = [0.2, 1.1].
        QTest::newRow("neither") << false << false << 0.2 << 1.1 << 1.0;
        // decay only: d = g + 0.04 b = [0.424, -0.268]; b = [0.176, 1.068].
        QTest::newRow("decay") << true << false << 0.176 << 1.068 << 1.0;
        // adapt only: local = 0.024 * 1 / 0.5 = 0.048; d = [0.0192, -0.0144].
        QTest::newRow("adapt") << false << true << 0.6 - 0.0192 << 0.8 + 0.0144 << 0.048;
        // both: local = 0.024 * 1 / (0.5 + 0.04 * 1) = 0.024 / 0.54; d = [0.424, -0.268] * local.
        QTest::newRow("both") << true << true << 0.6 - 0.424 * 0.024 / 0.54
                              << 0.8 + 0.268 * 0.024 / 0.54 << 0.024 / 0.54;
    }

    void decay_and_adaptation_switches() {
        QFETCH(bool, decayNormAndBias);
        QFETCH(bool, adaptNormAndBias);
        QFETCH(double, bias0);
        QFETCH(double, bias1);
        QFETCH(double, biasLocal);
        LarsConfig config = no_momentum();
        config.weight_decay = 0.04;
        config.trust_coefficient = 0.024;
        config.decay_norm_and_bias = decayNormAndBias;
        config.adapt_norm_and_bias = adaptNormAndBias;
        Lars lars(weight_and_bias(), config);
        std::vector<float> p{3.0f, 4.0f, 0.6f, 0.8f};
        const std::vector<float> g{0.6f, 0.8f, 0.4f, -0.3f};
        // weight, whatever the switches: local = 0.024 * 5 / (1 + 0.04 * 5) = 0.1;
        // d = ([0.6, 0.8] + 0.04 [3, 4]) * 0.1 = [0.072, 0.096]; w = [2.928, 3.904].
        lars.step(p, g, 1.0);
        CHECK_VALUES(lars.local_lrs(), 0.1, biasLocal);
        CHECK_VALUES(p, 2.928, 3.904, bias0, bias1);
    }

    void larc_clip_data() {
        QTest::addColumn<double>("lr");
        QTest::addColumn<double>("local");
        QTest::addColumn<double>("w0");
        QTest::addColumn<double>("w1");
        // w = [3, 4], g = [0.6, 0.8], eta 0.02: the LARS ratio is 0.02 * 5 / 1 = 0.1.
        // lr 0.5: local = min(0.1 / 0.5, 1) = 0.2; w = w - 0.5 * 0.2 * g = [2.94, 3.92]
        // (a step of 0.1 g: the local lr, below the global one).
        QTest::newRow("below lr") << 0.5 << 0.2 << 2.94 << 3.92;
        // lr 0.05: local = min(0.1 / 0.05, 1) = 1; w = w - 0.05 g = [2.97, 3.96]
        // (the global lr caps the step).
        QTest::newRow("clipped") << 0.05 << 1.0 << 2.97 << 3.96;
        // lr 0.1: exactly at the boundary, local = 1; w = w - 0.1 g = [2.94, 3.92].
        QTest::newRow("boundary") << 0.1 << 1.0 << 2.94 << 3.92;
    }

    void larc_clip() {
        QFETCH(double, lr);
        QFETCH(double, local);
        QFETCH(double, w0);
        QFETCH(double, w1);
        LarsConfig config = no_momentum();
        config.trust_coefficient = 0.02;
        config.larc = true;
        Lars lars({{"w", ParamRole::Weight, 0, 2}}, config);
        std::vector<float> p{3.0f, 4.0f};
        const std::vector<float> g{0.6f, 0.8f};
        lars.step(p, g, lr);
        CHECK_VALUES(lars.local_lrs(), local);
        CHECK_VALUES(p, w0, w1);
    }

    void lars_without_clip_is_not_capped() {
        // Same tensor as larc_clip, lr 0.05 and no LARC: w = w - 0.05 * 0.1 * g = [2.997, 3.996].
        LarsConfig config = no_momentum();
        config.trust_coefficient = 0.02;
        Lars lars({{"w", ParamRole::Weight, 0, 2}}, config);
        std::vector<float> p{3.0f, 4.0f};
        const std::vector<float> g{0.6f, 0.8f};
        lars.step(p, g, 0.05);
        CHECK_VALUES(lars.local_lrs(), 0.1);
        CHECK_VALUES(p, 2.997, 3.996);
    }

    void zero_norms_data() {
        QTest::addColumn<bool>("larc");
        QTest::newRow("lars") << false;
        QTest::newRow("larc") << true;
    }

    void zero_norms() {
        QFETCH(bool, larc);
        LarsConfig config = no_momentum();
        config.weight_decay = 0.1;
        config.larc = larc;
        config.adapt_norm_and_bias = true;
        std::vector<ParamSegment> segments{{"zero_w", ParamRole::Weight, 0, 2},
                                           {"zero_g", ParamRole::Weight, 2, 2},
                                           {"zero_both", ParamRole::Bias, 4, 2}};
        Lars lars(segments, config);
        std::vector<float> p{0.0f, 0.0f, 3.0f, 4.0f, 0.0f, 0.0f};
        const std::vector<float> g{1.0f, -2.0f, 0.0f, 0.0f, 0.0f, 0.0f};
        // Every local lr is 1 (a norm is 0), LARC's clip included; lr 0.1.
        // zero_w: d = g + 0.1 * 0 = g; w = [-0.1, 0.2].
        // zero_g: d = 0.1 * [3, 4]; w = [2.97, 3.96].
        // zero_both: stays 0.
        lars.step(p, g, 0.1);
        QVERIFY(all_finite(p));
        CHECK_VALUES(lars.local_lrs(), 1.0, 1.0, 1.0);
        CHECK_VALUES(p, -0.1, 0.2, 2.97, 3.96, 0.0, 0.0);
        // lr 0 with LARC: no division by 0, nothing moves.
        const std::vector<float> before = p;
        lars.step(p, g, 0.0);
        QVERIFY(all_finite(p));
        QVERIFY(p == before);
    }

    void invalid_configs_rejected_data() {
        QTest::addColumn<double>("momentum");
        QTest::addColumn<bool>("nesterov");
        QTest::addColumn<double>("weightDecay");
        QTest::addColumn<double>("eta");
        QTest::addColumn<QString>("mentions");
        QTest::newRow("negative momentum") << -0.1 << false << 0.0 << 0.001 << "[0, 1)";
        QTest::newRow("momentum 1") << 1.0 << false << 0.0 << 0.001 << "[0, 1)";
        QTest::newRow("nan momentum") << std::nan("") << false << 0.0 << 0.001 << "[0, 1)";
        QTest::newRow("negative decay") << 0.9 << false << -1e-4 << 0.001 << ">= 0";
        QTest::newRow("eta 0") << 0.9 << false << 0.0 << 0.0 << "> 0";
        QTest::newRow("negative eta") << 0.9 << false << 0.0 << -0.001 << "> 0";
        QTest::newRow("infinite eta") << 0.9 << false << 0.0 << HUGE_VAL << "> 0";
        QTest::newRow("nesterov without momentum") << 0.0 << true << 0.0 << 0.001 << "> 0";
    }

    void invalid_configs_rejected() {
        QFETCH(double, momentum);
        QFETCH(bool, nesterov);
        QFETCH(double, weightDecay);
        QFETCH(double, eta);
        QFETCH(QString, mentions);
        LarsConfig config;
        config.momentum = momentum;
        config.nesterov = nesterov;
        config.weight_decay = weightDecay;
        config.trust_coefficient = eta;
        const std::string message = construction_error<Lars>(config);
        QVERIFY2(message.find(mentions.toStdString()) != std::string::npos, message.c_str());
    }

    void bad_buffers_rejected() {
        Lars lars(weight_and_bias(), LarsConfig{});
        std::vector<float> p(4, 1.0f);
        const std::vector<float> g3(3, 0.0f);
        std::vector<float> p3(3, 1.0f);
        const std::vector<float> g(4, 0.0f);
        QVERIFY_THROWS_EXCEPTION(Error, lars.step(p, g3, 0.1));
        QVERIFY_THROWS_EXCEPTION(Error, lars.step(p3, g3, 0.1));
        QVERIFY_THROWS_EXCEPTION(Error, lars.step(p, g, std::nan("")));
        QCOMPARE(lars.steps(), std::int64_t{0});
        std::vector<ParamSegment> overlapping{{"a", ParamRole::Weight, 0, 3},
                                              {"b", ParamRole::Bias, 2, 2}};
        QVERIFY_THROWS_EXCEPTION(Error, Lars(overlapping, LarsConfig{}));
    }

    void from_spec() {
        RunSpec spec;
        spec.optimizer = OptimizerKind::Lars;
        spec.momentum = 0.8;
        spec.nesterov = true;
        spec.weight_decay = 5e-4;
        spec.trust_coefficient = 0.02;
        spec.larc = true;
        spec.decay_norm_and_bias = false;
        spec.adapt_norm_and_bias = true;
        std::unique_ptr<Optimizer> optimizer =
            scalelab::optim::make_optimizer(spec, weight_and_bias());
        QCOMPARE(std::string(optimizer->name()), std::string("lars"));
        const auto* lars = dynamic_cast<const Lars*>(optimizer.get());
        QVERIFY(lars != nullptr);
        QCOMPARE(lars->config().momentum, 0.8);
        QCOMPARE(lars->config().nesterov, true);
        QCOMPARE(lars->config().weight_decay, 5e-4);
        QCOMPARE(lars->config().trust_coefficient, 0.02);
        QCOMPARE(lars->config().larc, true);
        QCOMPARE(lars->config().decay_norm_and_bias, false);
        QCOMPARE(lars->config().adapt_norm_and_bias, true);
        QCOMPARE(lars->segments().size(), std::size_t{2});

        spec.trust_coefficient = 0.0;
        try {
            scalelab::optim::make_optimizer(spec, weight_and_bias());
            QFAIL("eta 0 accepted");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        }
    }
};

QTEST_APPLESS_MAIN(TestLars)
#include "test_lars.moc"
