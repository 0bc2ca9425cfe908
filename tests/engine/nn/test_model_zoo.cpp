// The model zoo against PyTorch's definitions in ../shared/anchors/torch_anchor.py: the same
// parameter and running-statistic counts (read off PyTorch 1.13 for 1x28x28 input), and clear
// errors for inputs a model cannot take.

#include <QtTest>

#include "backend/cpu/cpu_backend.h"
#include "error.h"
#include "nn/model.h"
#include "nn/model_zoo.h"

using namespace scalelab;

class ModelZoo : public QObject {
    Q_OBJECT

  private slots:
    void parameter_counts_match_pytorch_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("width");
        QTest::addColumn<qlonglong>("parameters");
        QTest::addColumn<qlonglong>("running_stats");
        QTest::newRow("mlp") << "mlp" << 10 << 269322LL << 0LL;
        QTest::newRow("cnn") << "cnn" << 10 << 421642LL << 0LL;
        QTest::newRow("resnet8") << "resnet8" << 10 << 77754LL << 672LL;
        QTest::newRow("resnet20") << "resnet20" << 10 << 272186LL << 1568LL;
        QTest::newRow("wrn k=1") << "wrn" << 1 << 174874LL << -1LL;
        QTest::newRow("wrn k=10") << "wrn" << 10 << 17117466LL << -1LL;
    }
    void parameter_counts_match_pytorch() {
        QFETCH(QString, name);
        QFETCH(int, width);
        QFETCH(qlonglong, parameters);
        QFETCH(qlonglong, running_stats);
        cpu::CpuBackend backend(1);
        nn::Model model(nn::build_model(name.toStdString(), 1, 28, width), Shape{1, 1, 28, 28},
                        backend, 0);
        QCOMPARE(qlonglong(model.parameter_count()), parameters);
        if (running_stats >= 0)
            QCOMPARE(qlonglong(model.state().size()), running_stats);
        QCOMPARE(model.root().output_shape(Shape{5, 1, 28, 28}), (Shape{5, 10, 1, 1}));
    }

    void segments_tile_the_flat_buffers_in_backward_order() {
        cpu::CpuBackend backend(1);
        nn::Model model(nn::build_model("cnn", 1, 28), Shape{1, 1, 28, 28}, backend, 0);
        const auto& segments = model.segments();
        std::size_t offset = 0;
        for (const auto& s : segments) {
            QCOMPARE(s.offset, offset);
            offset += s.size;
        }
        QCOMPARE(offset, model.parameter_count());
        // Backward produces the last layer's gradients first.
        QCOMPARE(QString::fromStdString(segments.front().name), QString("fc2.bias"));
        QCOMPARE(QString::fromStdString(segments.back().name), QString("conv1.weight"));
    }

    void initialisation_follows_pytorch_bounds_and_the_seed() {
        cpu::CpuBackend backend(1);
        nn::Model a(nn::build_model("cnn", 1, 28), Shape{1, 1, 28, 28}, backend, 7);
        nn::Model b(nn::build_model("cnn", 1, 28), Shape{1, 1, 28, 28}, backend, 7);
        nn::Model c(nn::build_model("cnn", 1, 28), Shape{1, 1, 28, 28}, backend, 8);
        QVERIFY(std::equal(a.params().begin(), a.params().end(), b.params().begin()));
        QVERIFY(!std::equal(a.params().begin(), a.params().end(), c.params().begin()));
        // conv1.weight: kaiming_uniform(a = sqrt 5) gives bound 1 / sqrt(fan_in = 9).
        const auto& conv1 = a.segments().back();
        float lo = 1, hi = -1;
        for (std::size_t i = 0; i < conv1.size; ++i) {
            lo = std::min(lo, a.params()[conv1.offset + i]);
            hi = std::max(hi, a.params()[conv1.offset + i]);
        }
        QVERIFY(lo >= -1.0f / 3 && hi <= 1.0f / 3);
        QVERIFY(lo < -0.25f && hi > 0.25f);  // and fills the range
    }

    void rejects_inputs_a_model_cannot_take() {
        for (auto [channels, size] : {std::pair{2, 28}, std::pair{1, 30}, std::pair{3, 0}}) {
            try {
                nn::build_model("cnn", channels, size);
                QFAIL("expected an error");
            } catch (const Error& e) {
                QCOMPARE(e.kind(), ErrorKind::InvalidSpec);
            }
        }
        try {
            nn::build_model("vgg", 1, 28);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QVERIFY(QString(e.what()).contains("resnet20"));
        }
    }
};

QTEST_APPLESS_MAIN(ModelZoo)
#include "test_model_zoo.moc"
