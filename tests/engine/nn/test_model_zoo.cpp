// The model zoo against PyTorch's definitions in ../shared/anchors/torch_anchor.py: the same
// parameter and running-statistic counts (read off PyTorch 1.13 for 1x28x28 input), and clear
// errors for inputs a model cannot take.

#include <QtTest>
#include <random>

#include "backend/cpu/cpu_backend.h"
#include "error.h"
#include "nn/model.h"
#include "nn/model_zoo.h"
#include "nn/residual.h"

using namespace scalelab;

namespace {

void all_names(const nn::Layer& layer, QStringList& out) {
    out << QString::fromStdString(layer.name());
    if (const auto* seq = dynamic_cast<const nn::Sequential*>(&layer))
        for (const auto& child : seq->layers())
            all_names(*child, out);
    if (const auto* block = dynamic_cast<const nn::Residual*>(&layer)) {
        all_names(block->body(), out);
        if (block->shortcut())
            all_names(*block->shortcut(), out);
    }
}

}  // namespace

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
        nn::Model model(nn::build_model(name.toStdString(), 1, 28, {.width = width}),
                        Shape{1, 1, 28, 28}, backend, 0);
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

    void zero_init_residual_zeroes_the_last_batch_norm_of_each_block_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<bool>("zero_init");
        QTest::addColumn<int>("blocks");
        QTest::newRow("resnet8") << "resnet8" << true << 3;
        QTest::newRow("resnet20") << "resnet20" << true << 9;
        QTest::newRow("resnet8, off") << "resnet8" << false << 3;
    }
    void zero_init_residual_zeroes_the_last_batch_norm_of_each_block() {
        // gamma of every "<block>.2.bn" is 0; every other batch norm's (stem, first of each
        // body, projections) stays 1, and the betas 0.
        QFETCH(QString, name);
        QFETCH(bool, zero_init);
        QFETCH(int, blocks);
        cpu::CpuBackend backend(1);
        nn::Model model(
            nn::build_model(name.toStdString(), 1, 28, {.zero_init_residual = zero_init}),
            Shape{1, 1, 28, 28}, backend, 0);
        int zeroed = 0, others = 0;
        for (const auto& s : model.segments()) {
            const auto values = model.params().subspan(s.offset, s.size);
            auto all = [&](float v) {
                return std::all_of(values.begin(), values.end(), [v](float e) { return e == v; });
            };
            const QString n = QString::fromStdString(s.name);
            if (n.endsWith(".2.bn.weight")) {
                QVERIFY2(all(zero_init ? 0.0f : 1.0f), s.name.c_str());
                ++zeroed;
            } else if (n.endsWith("bn.weight")) {
                QVERIFY2(all(1.0f), s.name.c_str());
                ++others;
            } else if (n.endsWith("bn.bias")) {
                QVERIFY2(all(0.0f), s.name.c_str());
            }
        }
        QCOMPARE(zeroed, blocks);
        QCOMPARE(others, 1 + blocks + 2);  // stem, each body's first, two projections
    }

    void zero_init_residual_makes_each_block_its_shortcut_data() {
        QTest::addColumn<bool>("zero_init");
        QTest::newRow("zero init") << true;
        QTest::newRow("off (must differ)") << false;
    }
    void zero_init_residual_makes_each_block_its_shortcut() {
        // At step 0 (training mode), each residual block of resnet8 gives body(x) = 0 exactly,
        // so block(x) = shortcut(x): x itself, or the 1x1 conv + BN projection.
        QFETCH(bool, zero_init);
        cpu::CpuBackend backend(1);
        nn::Model model(nn::build_model("resnet8", 1, 8, {.zero_init_residual = zero_init}),
                        Shape{2, 1, 8, 8}, backend, 3);
        const nn::Context ctx{backend, true, 0, {}, nullptr};
        auto plain = [&](const Tensor& t) {
            const Tensor p = backend.to_plain(t.desc)->forward(t);
            return std::vector<float>(p.data, p.data + t.shape().numel());
        };
        const auto& root = dynamic_cast<const nn::Sequential&>(model.root());
        int blocks = 0;
        for (const auto& layer : root.layers()) {
            auto* block = dynamic_cast<nn::Residual*>(layer.get());
            if (block == nullptr)
                continue;
            ++blocks;
            // stage1: 16 channels at 8x8; stage2 and 3 halve the side and double the channels.
            const int cin = blocks == 1 ? 16 : 16 << (blocks - 2);
            const int side = blocks == 1 ? 8 : 8 >> (blocks - 2);
            const Shape in{2, cin, side, side};
            std::mt19937 rng{unsigned(blocks)};
            std::uniform_real_distribution<float> u(-1.0f, 1.0f);
            std::vector<float> x(in.numel());
            for (auto& v : x)
                v = u(rng);
            const Tensor xt{TensorDesc{in, nullptr}, x.data()};
            auto& body = const_cast<nn::Sequential&>(block->body());
            const auto body_out = plain(body.forward(xt, ctx));
            const auto skip =
                block->shortcut()
                    ? plain(const_cast<nn::Sequential*>(block->shortcut())->forward(xt, ctx))
                    : x;
            const auto out = plain(block->forward(xt, ctx));
            QCOMPARE(out.size(), skip.size());
            const bool body_zero =
                std::all_of(body_out.begin(), body_out.end(), [](float v) { return v == 0.0f; });
            QVERIFY2(body_zero == zero_init, block->name().c_str());
            QVERIFY2(std::equal(out.begin(), out.end(), skip.begin()) == zero_init,
                     block->name().c_str());
        }
        QCOMPARE(blocks, 3);
    }

    void zero_init_residual_is_refused_where_it_cannot_work() {
        // wrn's bodies end in BN + ReLU (a zero gamma would leave them with zero gradients
        // forever); mlp and cnn have no residual blocks.
        for (const char* name : {"wrn", "mlp", "cnn"}) {
            try {
                nn::build_model(name, 1, 28, {.width = 1, .zero_init_residual = true});
                QFAIL(name);
            } catch (const Error& e) {
                QCOMPARE(e.kind(), ErrorKind::InvalidSpec);
                QVERIFY2(QString(e.what()).contains("resnet8 or resnet20"), e.what());
            }
        }
    }

    void ghost_batch_reaches_every_batch_norm() {
        // Every batch norm, inside residual bodies and projections too, says so in its name.
        cpu::CpuBackend backend(1);
        for (const int ghost : {4, 0})
            for (const char* name : {"resnet8", "wrn"}) {
                nn::Model model(nn::build_model(name, 1, 28, {.width = 1, .ghost_batch = ghost}),
                                Shape{1, 1, 28, 28}, backend, 0);
                QStringList names;
                all_names(model.root(), names);
                const auto norms = names.filter("batch norm");
                QVERIFY(norms.size() > 5);
                QCOMPARE(norms.filter("ghost batch 4").size(), ghost > 0 ? norms.size() : 0);
            }
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
