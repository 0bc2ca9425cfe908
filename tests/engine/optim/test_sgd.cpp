// SGD against updates worked out by hand from PyTorch's torch.optim.SGD formulas:
//   d = g + wd * p;  buf = d (first step) | momentum * buf + (1 - dampening) * d;
//   d = nesterov ? d + momentum * buf : buf;  p = p - lr * d.
// Every expected number below is written out step by step in the comments, not computed by
// code that mirrors the implementation.

#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "error.h"
#include "optim/sgd.h"
#include "optimizer_test_support.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::optim::ParamRole;
using scalelab::optim::ParamSegment;
using scalelab::optim::Sgd;
using scalelab::optim::SgdConfig;

using scalelab::testing::near;

namespace {

std::vector<ParamSegment> one_weight(std::size_t size) {
    return {ParamSegment{"w", ParamRole::Weight, 0, size}};
}

SgdConfig plain() {
    SgdConfig config;
    config.momentum = 0;
    return config;
}

ErrorKind kind_of_config_error(SgdConfig config) {
    try {
        Sgd sgd(one_weight(1), config);
    } catch (const Error& error) {
        return error.kind();
    }
    return ErrorKind::Internal;  // "no error" reads as a failure of the InvalidSpec comparisons
}

}  // namespace

class TestSgd : public QObject {
    Q_OBJECT

  private slots:
    void name() {
        Sgd sgd(one_weight(1), SgdConfig{});
        QCOMPARE(std::string(sgd.name()), std::string("sgd"));
    }

    void plainSgd() {
        Sgd sgd(one_weight(3), plain());
        QVERIFY(sgd.momentum_buffer().empty());
        std::vector<float> p{1.0f, -2.0f, 3.0f};
        // step 1, lr 0.1: p - 0.1 * g
        std::vector<float> g{0.5f, 0.25f, -1.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(p, 0.95, -2.025, 3.1);
        // step 2, lr 0.2: 0.95 - 0.2 = 0.75; -2.025 + 0.2 = -1.825; 3.1 - 0.4 = 2.7
        g = {1.0f, -1.0f, 2.0f};
        sgd.step(p, g, 0.2);
        CHECK_VALUES(p, 0.75, -1.825, 2.7);
        QCOMPARE(sgd.steps(), std::int64_t{2});
    }

    void momentum() {
        SgdConfig config;
        config.momentum = 0.9;
        Sgd sgd(one_weight(2), config);
        std::vector<float> p{1.0f, 2.0f};
        // step 1: buf = d = [1, -2] (first step: the gradient itself); p = [1 - 0.1, 2 + 0.2]
        std::vector<float> g{1.0f, -2.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 1.0, -2.0);
        CHECK_VALUES(p, 0.9, 2.2);
        // step 2: buf = 0.9 * [1, -2] + [0.5, 0.5] = [1.4, -1.3]; p = [0.9 - 0.14, 2.2 + 0.13]
        g = {0.5f, 0.5f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 1.4, -1.3);
        CHECK_VALUES(p, 0.76, 2.33);
        // step 3: buf = [1.26 + 0, -1.17 + 1] = [1.26, -0.17]; p = [0.76 - 0.126, 2.33 + 0.017]
        g = {0.0f, 1.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 1.26, -0.17);
        CHECK_VALUES(p, 0.634, 2.347);
    }

    void dampening() {
        SgdConfig config;
        config.momentum = 0.9;
        config.dampening = 0.5;
        Sgd sgd(one_weight(1), config);
        std::vector<float> p{1.0f};
        // step 1: buf = d = 2 (PyTorch does not damp the first step); p = 1 - 0.1 * 2 = 0.8
        std::vector<float> g{2.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 2.0);
        CHECK_VALUES(p, 0.8);
        // step 2: buf = 0.9 * 2 + 0.5 * 2 = 2.8; p = 0.8 - 0.28 = 0.52
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 2.8);
        CHECK_VALUES(p, 0.52);
        // step 3: g = -1: buf = 2.52 - 0.5 = 2.02; p = 0.52 - 0.202 = 0.318
        g = {-1.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 2.02);
        CHECK_VALUES(p, 0.318);
    }

    void nesterov() {
        SgdConfig config;
        config.momentum = 0.9;
        config.nesterov = true;
        Sgd sgd(one_weight(2), config);
        std::vector<float> p{1.0f, 0.0f};
        // step 1: buf = [1, -1]; d = g + 0.9 * buf = [1.9, -1.9]; p = [1 - 0.19, 0 + 0.19]
        std::vector<float> g{1.0f, -1.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 1.0, -1.0);
        CHECK_VALUES(p, 0.81, 0.19);
        // step 2, g = [1, 0]: buf = [0.9 + 1, -0.9 + 0] = [1.9, -0.9];
        // d = [1 + 1.71, 0 - 0.81] = [2.71, -0.81]; p = [0.81 - 0.271, 0.19 + 0.081]
        g = {1.0f, 0.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 1.9, -0.9);
        CHECK_VALUES(p, 0.539, 0.271);
        // step 3, g = [0, 0]: buf = [1.71, -0.81]; d = [1.539, -0.729];
        // p = [0.539 - 0.1539, 0.271 + 0.0729]
        g = {0.0f, 0.0f};
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 1.71, -0.81);
        CHECK_VALUES(p, 0.3851, 0.3439);
    }

    void weightDecayWithoutMomentum() {
        SgdConfig config = plain();
        config.weight_decay = 0.1;
        Sgd sgd(one_weight(1), config);
        std::vector<float> p{2.0f};
        std::vector<float> g{0.5f};
        // step 1: d = 0.5 + 0.1 * 2 = 0.7; p = 2 - 0.07 = 1.93
        sgd.step(p, g, 0.1);
        CHECK_VALUES(p, 1.93);
        // step 2: d = 0.5 + 0.193 = 0.693; p = 1.93 - 0.0693 = 1.8607
        sgd.step(p, g, 0.1);
        CHECK_VALUES(p, 1.8607);
    }

    void weightDecayThroughMomentum() {
        SgdConfig config;
        config.momentum = 0.9;
        config.weight_decay = 0.5;
        Sgd sgd(one_weight(1), config);
        std::vector<float> p{1.0f};
        std::vector<float> g{0.0f};
        // step 1: d = 0 + 0.5 * 1 = 0.5; buf = 0.5; p = 1 - 0.05 = 0.95
        sgd.step(p, g, 0.1);
        CHECK_VALUES(p, 0.95);
        // step 2: d = 0.5 * 0.95 = 0.475; buf = 0.45 + 0.475 = 0.925; p = 0.95 - 0.0925
        sgd.step(p, g, 0.1);
        CHECK_VALUES(sgd.momentum_buffer(), 0.925);
        CHECK_VALUES(p, 0.8575);
    }

    void weightDecaySkipsNormAndBias_data() {
        QTest::addColumn<bool>("decayNormAndBias");
        QTest::newRow("decay all") << true;
        QTest::newRow("weights only") << false;
    }

    void weightDecaySkipsNormAndBias() {
        QFETCH(bool, decayNormAndBias);
        // weight [0,2), bias [2,3), BN scale [3,4), BN shift [4,5), weight [5,6)
        std::vector<ParamSegment> segments{
            {"conv.weight", ParamRole::Weight, 0, 2},  {"conv.bias", ParamRole::Bias, 2, 1},
            {"bn.weight", ParamRole::NormScale, 3, 1}, {"bn.bias", ParamRole::NormShift, 4, 1},
            {"fc.weight", ParamRole::Weight, 5, 1},
        };
        SgdConfig config;
        config.momentum = 0.9;
        config.weight_decay = 0.1;
        config.decay_norm_and_bias = decayNormAndBias;
        Sgd sgd(segments, config);
        std::vector<float> p(6, 1.0f);
        const std::vector<float> g(6, 0.0f);
        // A decayed float, lr 1: step 1: d = 0.1, buf = 0.1, p = 0.9;
        // step 2: d = 0.09, buf = 0.09 + 0.09 = 0.18, p = 0.9 - 0.18 = 0.72.
        // An excluded float has d = 0 throughout and stays at 1.
        sgd.step(p, g, 1.0);
        sgd.step(p, g, 1.0);
        const double other = decayNormAndBias ? 0.72 : 1.0;
        CHECK_VALUES(p, 0.72, 0.72, other, other, other, 0.72);
    }

    void padding_between_segments_is_untouched() {
        // Floats 2 and 4 belong to no segment: neither updated nor decayed.
        std::vector<ParamSegment> segments{{"a", ParamRole::Weight, 0, 2},
                                           {"b", ParamRole::Bias, 3, 1}};
        SgdConfig config;
        config.weight_decay = 0.5;
        Sgd sgd(segments, config);
        std::vector<float> p{1.0f, 1.0f, 7.0f, 1.0f, 7.0f};
        const std::vector<float> g{1.0f, 1.0f, 100.0f, 1.0f, 100.0f};
        // in a segment: d = 1 + 0.5 = 1.5; p = 1 - 0.1 * 1.5 = 0.85
        sgd.step(p, g, 0.1);
        CHECK_VALUES(p, 0.85, 0.85, 7.0, 0.85, 7.0);
    }

    void long_buffer_every_float() {
        // Long enough for the vectorised body and a scalar tail, with segments out of order.
        const std::size_t n = 1003;
        std::vector<ParamSegment> segments{{"second", ParamRole::Weight, 500, n - 500},
                                           {"first", ParamRole::Weight, 0, 500}};
        Sgd sgd(segments, plain());
        std::vector<float> p(n);
        std::vector<float> g(n);
        for (std::size_t i = 0; i < n; ++i) {
            p[i] = static_cast<float>(i);
            g[i] = (i % 2 == 0) ? 1.0f : -1.0f;
        }
        // p_i = i - 0.5 * (+-1)
        sgd.step(p, g, 0.5);
        for (std::size_t i = 0; i < n; ++i) {
            const double expected = static_cast<double>(i) + ((i % 2 == 0) ? -0.5 : 0.5);
            QVERIFY2(p[i] == static_cast<float>(expected), qPrintable(QString::number(i)));
        }
    }

    void zero_momentum_has_no_buffer() {
        Sgd sgd(one_weight(4), plain());
        QVERIFY(sgd.momentum_buffer().empty());
        SgdConfig config;
        config.momentum = 0.5;
        Sgd with(one_weight(4), config);
        QCOMPARE(with.momentum_buffer().size(), std::size_t{4});
    }

    void invalid_configs_rejected_data() {
        QTest::addColumn<double>("momentum");
        QTest::addColumn<double>("dampening");
        QTest::addColumn<bool>("nesterov");
        QTest::addColumn<double>("weightDecay");
        QTest::newRow("negative momentum") << -0.1 << 0.0 << false << 0.0;
        QTest::newRow("nan momentum") << std::nan("") << 0.0 << false << 0.0;
        QTest::newRow("negative dampening") << 0.9 << -0.1 << false << 0.0;
        QTest::newRow("negative weight decay") << 0.9 << 0.0 << false << -1e-4;
        QTest::newRow("infinite weight decay") << 0.9 << 0.0 << false << HUGE_VAL;
        QTest::newRow("nesterov without momentum") << 0.0 << 0.0 << true << 0.0;
        QTest::newRow("nesterov with dampening") << 0.9 << 0.1 << true << 0.0;
    }

    void invalid_configs_rejected() {
        QFETCH(double, momentum);
        QFETCH(double, dampening);
        QFETCH(bool, nesterov);
        QFETCH(double, weightDecay);
        SgdConfig config;
        config.momentum = momentum;
        config.dampening = dampening;
        config.nesterov = nesterov;
        config.weight_decay = weightDecay;
        QCOMPARE(kind_of_config_error(config), ErrorKind::InvalidSpec);
    }

    void valid_edge_configs_accepted() {
        SgdConfig config;
        config.momentum = 0.9;
        config.nesterov = true;
        config.dampening = 0;
        Sgd nesterov(one_weight(1), config);
        config = plain();
        Sgd none(one_weight(1), config);
        config.dampening = 0.5;  // dampening without momentum: allowed (and ignored) by PyTorch
        Sgd damped(one_weight(1), config);
        QVERIFY(true);
    }

    void overlapping_segments_rejected() {
        std::vector<ParamSegment> segments{{"a", ParamRole::Weight, 0, 3},
                                           {"b", ParamRole::Bias, 2, 2}};
        QVERIFY_THROWS_EXCEPTION(Error, Sgd(segments, SgdConfig{}));
    }

    void bad_buffers_rejected() {
        Sgd sgd(one_weight(3), SgdConfig{});
        std::vector<float> p(3, 1.0f);
        std::vector<float> g2(2, 0.0f);
        std::vector<float> p2(2, 1.0f);
        std::vector<float> g(3, 0.0f);
        try {
            sgd.step(p, g2, 0.1);
            QFAIL("lengths differ");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::Internal);
        }
        try {
            sgd.step(p2, g2, 0.1);
            QFAIL("buffers shorter than the segments");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::Internal);
        }
        try {
            sgd.step(p, g, -0.1);
            QFAIL("negative lr");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        }
        QCOMPARE(sgd.steps(), std::int64_t{0});  // nothing was stepped
        CHECK_VALUES(p, 1.0, 1.0, 1.0);
    }
};

QTEST_APPLESS_MAIN(TestSgd)
#include "test_sgd.moc"
