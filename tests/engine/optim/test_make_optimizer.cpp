// make_optimizer maps a RunSpec's optimiser fields onto the optimiser it builds.

#include <QTest>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "error.h"
#include "optim/make_optimizer.h"
#include "optim/sgd.h"
#include "train/run_spec.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::RunSpec;
using namespace scalelab::optim;

class TestMakeOptimizer : public QObject {
    Q_OBJECT

  private slots:
    void sgd_from_spec() {
        RunSpec spec;
        spec.momentum = 0.5;
        spec.nesterov = true;
        spec.weight_decay = 0.1;
        spec.decay_norm_and_bias = false;
        std::vector<ParamSegment> segments{{"w", ParamRole::Weight, 0, 1},
                                           {"b", ParamRole::Bias, 1, 1}};
        std::unique_ptr<Optimizer> optimizer = make_optimizer(spec, segments);
        QCOMPARE(std::string(optimizer->name()), std::string("sgd"));
        const auto* sgd = dynamic_cast<const Sgd*>(optimizer.get());
        QVERIFY(sgd != nullptr);
        QCOMPARE(sgd->config().momentum, 0.5);
        QCOMPARE(sgd->config().dampening, 0.0);
        QCOMPARE(sgd->config().nesterov, true);
        QCOMPARE(sgd->config().weight_decay, 0.1);
        QCOMPARE(sgd->config().decay_norm_and_bias, false);
        QCOMPARE(sgd->segments().size(), std::size_t{2});

        // One step, lr 1, g = 0, p = 1: weight d = 0.1, buf = 0.1, d = 0.1 + 0.05 = 0.15,
        // p = 0.85; the bias is not decayed and stays 1.
        std::vector<float> p{1.0f, 1.0f};
        const std::vector<float> g{0.0f, 0.0f};
        optimizer->step(p, g, 1.0);
        QVERIFY(std::abs(p[0] - 0.85f) < 1e-6f);
        QCOMPARE(p[1], 1.0f);
    }

    void bad_spec_rejected() {
        RunSpec spec;
        spec.momentum = 0.0;
        spec.nesterov = true;
        try {
            make_optimizer(spec, {});
            QFAIL("Nesterov without momentum accepted");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        }
    }
};

QTEST_APPLESS_MAIN(TestMakeOptimizer)
#include "test_make_optimizer.moc"
