// Finite-difference checks of every layer's backward pass, in training mode, and of the
// inference-mode forward passes against their formulas.

#include <QtTest>
#include <random>

#include "comm/thread_comm.h"
#include "error.h"
#include "gradient_check.h"
#include "nn/batch_norm.h"
#include "nn/conv2d.h"
#include "nn/dropout.h"
#include "nn/linear.h"
#include "nn/model_zoo.h"
#include "nn/pool.h"
#include "nn/relu.h"
#include "nn/residual.h"

using namespace scalelab;
using testing::GradientCheck;

namespace {

constexpr double kTolerance = 2e-2;

void expect_gradients_match(std::unique_ptr<nn::Layer> layer, Shape input, int samples = 24) {
    GradientCheck check(std::move(layer), input);
    const auto err = check.check(samples, 1e-3, kTolerance);
    QVERIFY2(err.worst < kTolerance, err.where.c_str());
    QVERIFY2(err.skipped_at_kinks * 4 <= err.checked + err.skipped_at_kinks,
             qPrintable(QString("%1 of %2 coordinates sat at kinks")
                            .arg(err.skipped_at_kinks)
                            .arg(err.checked + err.skipped_at_kinks)));
}

std::unique_ptr<nn::Sequential> seq(std::string name) {
    return std::make_unique<nn::Sequential>(std::move(name));
}

// A layer wrapped as {layer, flatten} in a Model, run by hand: forward and backward with a
// given input and output gradient (GradientCheck draws its own), in training mode.
class Runner {
  public:
    Runner(std::unique_ptr<nn::Layer> layer, Shape input) : backend_(1) {
        auto root = seq("run");
        root->add(std::move(layer)).emplace<nn::Flatten>("flatten");
        root_ = root.get();
        model_ = std::make_unique<nn::Model>(std::move(root), input, backend_, 1);
    }
    nn::Model& model() { return *model_; }
    std::vector<float> forward(std::span<const float> x, Shape shape) {
        shape_ = shape;
        const Tensor y = root_->forward(
            Tensor{TensorDesc{shape, nullptr}, const_cast<float*>(x.data())}, context());
        return std::vector<float>(y.data, y.data + root_->output_shape(shape).numel());
    }
    std::vector<float> backward(std::span<const float> dy) {
        const Tensor dx = root_->backward(
            Tensor{TensorDesc{root_->output_shape(shape_), nullptr}, const_cast<float*>(dy.data())},
            context(), true);
        return std::vector<float>(dx.data, dx.data + shape_.numel());
    }

  private:
    nn::Context context() { return nn::Context{backend_, true, 42, {}, nullptr}; }
    cpu::CpuBackend backend_;
    nn::Sequential* root_ = nullptr;
    std::unique_ptr<nn::Model> model_;
    Shape shape_;
};

void expect_close(std::span<const float> a, std::span<const float> b, const char* what,
                  double tolerance = 1e-5) {
    QCOMPARE(a.size(), b.size());
    double worst = 0;
    std::size_t at = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const double e = std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(double(b[i])));
        if (e > worst)
            worst = e, at = i;
    }
    QVERIFY2(worst < tolerance, qPrintable(QString("%1: %2 at %3 (%4 vs %5)")
                                               .arg(what)
                                               .arg(worst)
                                               .arg(at)
                                               .arg(a.empty() ? 0.0 : a[at])
                                               .arg(b.empty() ? 0.0 : b[at])));
}

std::vector<float> uniform(std::size_t n, unsigned seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(lo, hi);
    std::vector<float> v(n);
    for (auto& e : v)
        e = u(rng);
    return v;
}

}  // namespace

class LayerGradients : public QObject {
    Q_OBJECT

  private slots:
    void conv2d_data() {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<bool>("bias");
        QTest::addColumn<int>("in_channels");
        QTest::newRow("3x3 bias") << 3 << 1 << true << 3;
        QTest::newRow("3x3 one channel") << 3 << 1 << true << 1;
        QTest::newRow("3x3 stride 2 no bias") << 3 << 2 << false << 16;
        QTest::newRow("1x1 stride 2") << 1 << 2 << false << 16;
    }
    void conv2d() {
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(bool, bias);
        QFETCH(int, in_channels);
        expect_gradients_match(
            std::make_unique<nn::Conv2d>(
                "conv", Conv2dConfig{in_channels, 16, kernel, stride, kernel / 2, bias}),
            Shape{2, in_channels, 8, 8});
    }

    void linear() {
        expect_gradients_match(std::make_unique<nn::Linear>("fc", LinearConfig{12, 5}),
                               Shape{3, 12, 1, 1});
    }

    void batch_norm_data() {
        QTest::addColumn<bool>("relu");
        QTest::newRow("plain") << false;
        QTest::newRow("fused relu") << true;
    }
    void batch_norm() {
        QFETCH(bool, relu);
        // Behind a convolution, so that it sees the blocked layout it sees in the models.
        auto s = seq("conv-bn");
        s->emplace<nn::Conv2d>("conv", Conv2dConfig{3, 16, 3, 1, 1, false})
            .emplace<nn::BatchNorm>(
                "bn", 16, relu ? nn::BatchNorm::Activation::Relu : nn::BatchNorm::Activation::None);
        expect_gradients_match(std::move(s), Shape{4, 3, 6, 6}, 40);
    }

    void sync_batch_norm_data() {
        QTest::addColumn<bool>("relu");
        QTest::addColumn<int>("channels");
        QTest::addColumn<bool>("behind_conv");
        QTest::newRow("plain nchw") << false << 3 << false;
        QTest::newRow("plain nchw + relu") << true << 3 << false;
        QTest::newRow("16 channels (blocked)") << false << 16 << true;
        QTest::newRow("16 channels (blocked) + relu") << true << 16 << true;
        QTest::newRow("24 channels (padded block) + relu") << true << 24 << true;
        QTest::newRow("8 channels") << false << 8 << true;
    }
    void sync_batch_norm() {
        // Synchronised batch norm over a group of one rank is batch norm: its own kernel (the
        // moments, the oneDNN normalisation with given statistics, the gradient sums and the
        // dx correction) must give what the ordinary kernel gives, in every layout the models
        // hand it, and pass the finite-difference check.
        QFETCH(bool, relu);
        QFETCH(int, channels);
        QFETCH(bool, behind_conv);
        const Shape in{4, 3, 6, 6};
        auto layer = [&] {
            auto s = seq("conv-bn");
            if (behind_conv)
                s->emplace<nn::Conv2d>("conv", Conv2dConfig{3, channels, 3, 1, 1, false});
            s->emplace<nn::BatchNorm>(
                "bn", channels,
                relu ? nn::BatchNorm::Activation::Relu : nn::BatchNorm::Activation::None);
            return s;
        };
        auto group = comm::ThreadGroup::create(1);
        auto one_rank = group->communicator(0);
        GradientCheck synced(layer(), in), plain(layer(), in);
        synced.set_sync_bn(one_rank.get());

        auto close = [](std::span<const float> a, std::span<const float> b, const char* what) {
            QCOMPARE(a.size(), b.size());
            double worst = 0;
            for (std::size_t i = 0; i < a.size(); ++i)
                worst = std::max(
                    worst, std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(double(b[i]))));
            QVERIFY2(worst < 1e-5, qPrintable(QString("%1: %2").arg(what).arg(worst)));
        };
        const auto y_synced = synced.output(true), y_plain = plain.output(true);
        close(y_synced, y_plain, "output");
        const auto dx_synced = synced.analytic(), dx_plain = plain.analytic();
        close(dx_synced, dx_plain, "input gradient");
        close(synced.model().grads(), plain.model().grads(), "parameter gradients");
        close(synced.model().state(), plain.model().state(), "running statistics");

        const auto err = synced.check(40, 1e-3, kTolerance);
        QVERIFY2(err.worst < kTolerance, err.where.c_str());
        QVERIFY(err.checked > 0);
    }

    void sync_batch_norm_kernel_on_nChw8c_data() {
        QTest::addColumn<bool>("relu");
        QTest::newRow("plain") << false;
        QTest::newRow("fused relu") << true;
    }
    void sync_batch_norm_kernel_on_nChw8c() {
        // The convolutions of this CPU may never pick nChw8c, so that layout is built by hand:
        // 12 channels in blocks of 8, the last block padded with 4 zero channels. The sync
        // kernel's phases, run with its own local statistics and sums (a group of one), must
        // give the ordinary kernel's output, gradients and running statistics, and keep the
        // padding of dx zero.
        QFETCH(bool, relu);
        using dnnl::memory;
        const Shape shape{3, 12, 5, 5};
        const auto md =
            memory::desc(cpu::dims_of(shape), memory::data_type::f32, memory::format_tag::nChw8c);
        const TensorDesc desc{shape, std::make_shared<cpu::DnnlLayout>(md)};
        const std::size_t physical = md.get_size() / sizeof(float);
        QCOMPARE(physical, std::size_t(3 * 16 * 25));
        std::mt19937 rng(11);
        std::uniform_real_distribution<float> u(-2.0f, 3.0f);
        std::vector<float> x(physical, 0.0f), dy(physical, 0.0f);
        for (std::size_t i = 0; i < physical; ++i)
            if (int(i / 8 / 25 % 2) * 8 + int(i % 8) < shape.c) {  // a real channel
                x[i] = u(rng);
                dy[i] = u(rng);
            }
        const BatchNormConfig cfg{shape.c, relu, 1e-5f, 0.1f};
        std::vector<float> scale(12), shift(12);
        for (int c = 0; c < 12; ++c) {
            scale[std::size_t(c)] = 0.5f + 0.1f * float(c);
            shift[std::size_t(c)] = 0.2f - 0.05f * float(c);
        }
        cpu::CpuBackend backend(1);

        std::vector<float> rm_a(12, 0.0f), rv_a(12, 1.0f), ds_a(12), dh_a(12);
        auto normal = backend.batch_norm(cfg, desc, true);
        const Tensor ya = normal->forward(Tensor{desc, x.data()}, scale.data(), shift.data(),
                                          rm_a.data(), rv_a.data());
        const std::vector<float> y_a(ya.data, ya.data + physical);
        const Tensor dxa =
            normal->backward(Tensor{desc, dy.data()}, scale.data(), ds_a.data(), dh_a.data());
        const std::vector<float> dx_a(dxa.data, dxa.data + physical);

        std::vector<float> rm_b(12, 0.0f), rv_b(12, 1.0f), ds_b(12), dh_b(12), moments(24),
            sums(24);
        auto synced = backend.sync_batch_norm(cfg, desc);
        QCOMPARE(synced->local_count(), 75.0);
        synced->local_moments(Tensor{desc, x.data()}, moments);
        const Tensor yb = synced->forward(moments.data(), moments.data() + 12, 75.0, scale.data(),
                                          shift.data(), rm_b.data(), rv_b.data());
        synced->gradient_sums(Tensor{desc, dy.data()}, ds_b.data(), dh_b.data(), sums);
        const Tensor dxb = synced->backward(scale.data(), sums, 75.0);

        auto close = [](std::span<const float> a, std::span<const float> b, const char* what) {
            double worst = 0;
            for (std::size_t i = 0; i < a.size(); ++i)
                worst = std::max(
                    worst, std::abs(double(a[i]) - b[i]) / std::max(1.0, std::abs(double(b[i]))));
            QVERIFY2(worst < 1e-5, qPrintable(QString("%1: %2").arg(what).arg(worst)));
        };
        close({yb.data, physical}, y_a, "output");
        close({dxb.data, physical}, dx_a, "input gradient");
        close(ds_b, ds_a, "scale gradient");
        close(dh_b, dh_a, "shift gradient");
        close(rm_b, rm_a, "running mean");
        close(rv_b, rv_a, "running variance");
        for (std::size_t i = 0; i < physical; ++i)
            if (int(i / 8 / 25 % 2) * 8 + int(i % 8) >= shape.c)
                QCOMPARE(dxb.data[i], 0.0f);
    }

    void sync_batch_norm_names_a_layout_it_does_not_handle() {
        const Shape shape{2, 4, 3, 3};
        const auto nhwc = dnnl::memory::desc(cpu::dims_of(shape), dnnl::memory::data_type::f32,
                                             dnnl::memory::format_tag::nhwc);
        cpu::CpuBackend backend(1);
        try {
            backend.sync_batch_norm(BatchNormConfig{4, false, 1e-5f, 0.1f},
                                    TensorDesc{shape, std::make_shared<cpu::DnnlLayout>(nhwc)});
            QFAIL("no error for nhwc");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Internal);
            QVERIFY2(QString(e.what()).contains("strides 36,1,12,4"), e.what());
        }
    }

    void ghost_batch_norm_data() {
        QTest::addColumn<bool>("relu");
        QTest::addColumn<int>("channels");
        QTest::addColumn<bool>("behind_conv");
        QTest::addColumn<int>("slices");
        QTest::newRow("plain nchw, 2 slices") << false << 3 << false << 2;
        QTest::newRow("plain nchw + relu, 3 slices") << true << 3 << false << 3;
        QTest::newRow("16 channels (blocked), 2 slices") << false << 16 << true << 2;
        QTest::newRow("16 channels (blocked) + relu, 2 slices") << true << 16 << true << 2;
        QTest::newRow("24 channels (padded block) + relu, 3 slices") << true << 24 << true << 3;
    }
    void ghost_batch_norm() {
        // Ghost batch norm with virtual batches of g on a batch of k g is k separate batch
        // norms (same gamma and beta) on the k slices: the same outputs and input gradients
        // slice by slice, parameter gradients that are the sums of the slices' (the conv's
        // too), and running statistics updated once per slice in order. In every layout the
        // models hand it; then the finite-difference check.
        QFETCH(bool, relu);
        QFETCH(int, channels);
        QFETCH(bool, behind_conv);
        QFETCH(int, slices);
        const int g = 2;
        const Shape full{g * slices, 3, 5, 5}, slice{g, 3, 5, 5};
        auto layer = [&](int ghost) {
            auto s = seq("conv-bn");
            if (behind_conv)
                s->emplace<nn::Conv2d>("conv", Conv2dConfig{3, channels, 3, 1, 1, false});
            s->emplace<nn::BatchNorm>(
                "bn", channels, nn::BatchNormOptions{.fused_relu = relu, .ghost_batch = ghost});
            return s;
        };
        Runner ghosted(layer(g), full), separate(layer(0), slice);
        // Not the initial gamma = 1, beta = 0: every parameter must matter.
        const auto params = uniform(ghosted.model().params().size(), 5, 0.5f, 1.5f);
        std::copy(params.begin(), params.end(), ghosted.model().params().begin());
        std::copy(params.begin(), params.end(), separate.model().params().begin());
        const auto x = uniform(full.numel(), 6, -2.0f, 3.0f);
        const std::size_t out_per_slice = std::size_t(g) * channels * 25;
        const auto dy = uniform(out_per_slice * std::size_t(slices), 7);

        const auto y = ghosted.forward(x, full);
        const auto dx = ghosted.backward(dy);
        const std::vector<float> grads(ghosted.model().grads().begin(),
                                       ghosted.model().grads().end());
        std::vector<float> y_sep, dx_sep;
        std::vector<double> grad_sum(grads.size(), 0.0);
        for (int i = 0; i < slices; ++i) {
            const auto yi = separate.forward(
                std::span<const float>(x).subspan(std::size_t(i) * slice.numel(), slice.numel()),
                slice);
            const auto dxi = separate.backward(
                std::span<const float>(dy).subspan(std::size_t(i) * out_per_slice, out_per_slice));
            y_sep.insert(y_sep.end(), yi.begin(), yi.end());
            dx_sep.insert(dx_sep.end(), dxi.begin(), dxi.end());
            for (std::size_t j = 0; j < grads.size(); ++j)
                grad_sum[j] += separate.model().grads()[j];
        }
        const std::vector<float> grads_sep(grad_sum.begin(), grad_sum.end());
        expect_close(y, y_sep, "output");
        expect_close(dx, dx_sep, "input gradient");
        expect_close(grads, grads_sep, "parameter gradients", 1e-4);
        expect_close(ghosted.model().state(), separate.model().state(), "running statistics");

        GradientCheck check(layer(g), full);
        const auto err = check.check(40, 1e-3, kTolerance);
        QVERIFY2(err.worst < kTolerance, err.where.c_str());
        QVERIFY(err.checked > 20);
    }

    void ghost_batch_norm_is_ordinary_batch_norm_where_the_batch_does_not_split() {
        // n <= g or n not a multiple of g (the last batch of an epoch): statistics over the
        // whole batch; and evaluation never uses ghost batches.
        for (const Shape in : {Shape{6, 16, 3, 3}, Shape{4, 16, 3, 3}, Shape{3, 16, 3, 3}}) {
            auto layer = [](int ghost) {
                auto s = seq("conv-bn");
                s->emplace<nn::Conv2d>("conv", Conv2dConfig{16, 16, 3, 1, 1, false})
                    .emplace<nn::BatchNorm>("bn", 16, nn::BatchNormOptions{.ghost_batch = ghost});
                return s;
            };
            GradientCheck ghosted(layer(4), in), ordinary(layer(0), in);
            expect_close(ghosted.output(true), ordinary.output(true), "training output");
            expect_close(ghosted.analytic(), ordinary.analytic(), "input gradient");
            expect_close(ghosted.model().grads(), ordinary.model().grads(), "parameter gradients");
            expect_close(ghosted.output(false), ordinary.output(false), "inference output");
        }
        // The test above would pass for a layer that ignored ghost_batch; it must not.
        auto ghost = seq("bn");
        ghost->emplace<nn::BatchNorm>("bn", 2, nn::BatchNormOptions{.ghost_batch = 2});
        GradientCheck ghosted(std::move(ghost), Shape{4, 2, 2, 2}),
            ordinary(std::make_unique<nn::BatchNorm>("bn", 2), Shape{4, 2, 2, 2});
        expect_close(ghosted.output(false), ordinary.output(false), "inference output");
        const auto a = ghosted.output(true), b = ordinary.output(true);
        QVERIFY(!std::equal(a.begin(), a.end(), b.begin()));
    }

    void ghost_batch_norm_refuses_sync_bn() {
        auto group = comm::ThreadGroup::create(1);
        auto one_rank = group->communicator(0);
        GradientCheck check(
            std::make_unique<nn::BatchNorm>("bn", 2, nn::BatchNormOptions{.ghost_batch = 2}),
            Shape{4, 2, 2, 2});
        check.set_sync_bn(one_rank.get());
        try {
            check.output(true);
            QFAIL("no error for ghost_batch with sync_bn");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidSpec);
            QVERIFY2(QString(e.what()).contains("ghost_batch and sync_bn cannot be combined"),
                     e.what());
        }
    }

    void zero_gamma_before_a_fused_relu_stops_every_gradient() {
        // Why the zoo refuses zero_init_residual for wrn, whose block bodies end in batch norm
        // + ReLU: with gamma = 0 (and beta = 0) the output is relu(0) = 0, and the ReLU passes
        // no gradient at 0, so nothing below it, gamma and beta included, ever gets one. Without
        // the ReLU (the ResNets' .2.bn), gamma's gradient sum(dy xhat) is not 0.
        for (const bool relu : {true, false}) {
            auto s = seq("conv-bn");
            s->emplace<nn::Conv2d>("conv", Conv2dConfig{3, 16, 3, 1, 1, false})
                .emplace<nn::BatchNorm>(
                    "bn", 16, nn::BatchNormOptions{.fused_relu = relu, .initial_scale = 0.0f});
            GradientCheck check(std::move(s), Shape{2, 3, 4, 4});
            const auto y = check.output(true);
            QVERIFY(std::all_of(y.begin(), y.end(), [](float v) { return v == 0.0f; }));
            const auto dx = check.analytic();
            const auto grads = check.model().grads();
            const bool all_zero =
                std::all_of(dx.begin(), dx.end(), [](float v) { return v == 0.0f; }) &&
                std::all_of(grads.begin(), grads.end(), [](float v) { return v == 0.0f; });
            QCOMPARE(all_zero, relu);
        }
    }

    void relu() { expect_gradients_match(std::make_unique<nn::Relu>("relu"), Shape{2, 4, 5, 5}); }

    void pooling_data() {
        QTest::addColumn<int>("kind");
        QTest::addColumn<int>("kernel");
        QTest::newRow("max 2x2") << int(PoolKind::Max) << 2;
        QTest::newRow("average 2x2") << int(PoolKind::Average) << 2;
        QTest::newRow("global average") << int(PoolKind::Average) << 0;
    }
    void pooling() {
        QFETCH(int, kind);
        QFETCH(int, kernel);
        auto s = seq("conv-pool");
        s->emplace<nn::Conv2d>("conv", Conv2dConfig{2, 16, 3, 1, 1, true})
            .emplace<nn::Pool>("pool", PoolConfig{PoolKind(kind), kernel, kernel == 0 ? 1 : 2, 0});
        expect_gradients_match(std::move(s), Shape{2, 2, 8, 8});
    }

    void max_pool_matches_its_definition_on_blocked_layouts_data() {
        QTest::addColumn<int>("channels");
        QTest::newRow("16 channels (nChw16c)") << 16;
        QTest::newRow("24 channels (padded block)") << 24;
        QTest::newRow("8 channels") << 8;
    }
    void max_pool_matches_its_definition_on_blocked_layouts() {
        // The same convolution (same seed, same only parameter) with and without the pool;
        // the pooled output must be the 2x2 maxima of the plain one.
        QFETCH(int, channels);
        const Shape in{3, 2, 6, 6};
        auto conv = [&] {
            return std::make_unique<nn::Conv2d>("conv", Conv2dConfig{2, channels, 3, 1, 1, true});
        };
        auto pooled = seq("conv-pool");
        pooled->add(conv()).emplace<nn::Pool>("pool", PoolConfig{PoolKind::Max, 2, 2, 0});
        GradientCheck with_pool(std::move(pooled), in);
        GradientCheck without_pool(conv(), in);
        const auto y = with_pool.output(true);
        const auto z = without_pool.output(true);
        for (int n = 0; n < 3; ++n)
            for (int c = 0; c < channels; ++c)
                for (int i = 0; i < 3; ++i)
                    for (int j = 0; j < 3; ++j) {
                        auto at = [&](int h, int w) {
                            return z[((std::size_t(n) * channels + c) * 6 + h) * 6 + w];
                        };
                        const float expected =
                            std::max({at(2 * i, 2 * j), at(2 * i, 2 * j + 1), at(2 * i + 1, 2 * j),
                                      at(2 * i + 1, 2 * j + 1)});
                        QCOMPARE(y[((std::size_t(n) * channels + c) * 3 + i) * 3 + j], expected);
                    }
    }

    void dropout() {
        // The mask is a function of the seed only, so the loss stays differentiable.
        expect_gradients_match(std::make_unique<nn::Dropout>("drop", 0.3f, 0), Shape{2, 3, 4, 4});
    }

    void residual_identity() {
        auto body = seq("body");
        body->emplace<nn::Conv2d>("c1", Conv2dConfig{16, 16, 3, 1, 1, false})
            .emplace<nn::BatchNorm>("bn", 16)
            .emplace<nn::Relu>("relu");
        auto s = seq("stem-block");
        s->emplace<nn::Conv2d>("stem", Conv2dConfig{1, 16, 3, 1, 1, true})
            .emplace<nn::Residual>("block", std::move(body), nullptr);
        expect_gradients_match(std::move(s), Shape{2, 1, 6, 6}, 40);
    }

    void residual_projection() {
        auto body = seq("body");
        body->emplace<nn::Conv2d>("c1", Conv2dConfig{16, 32, 3, 2, 1, false})
            .emplace<nn::BatchNorm>("bn", 32);
        auto shortcut = seq("shortcut");
        shortcut->emplace<nn::Conv2d>("proj", Conv2dConfig{16, 32, 1, 2, 0, false})
            .emplace<nn::BatchNorm>("proj.bn", 32);
        auto s = seq("stem-block");
        s->emplace<nn::Conv2d>("stem", Conv2dConfig{1, 16, 3, 1, 1, true})
            .emplace<nn::Residual>("block", std::move(body), std::move(shortcut));
        expect_gradients_match(std::move(s), Shape{2, 1, 8, 8}, 40);
    }

    void whole_models_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<int>("size");
        for (const char* m : {"mlp", "cnn", "resnet8"})
            QTest::newRow(m) << QString(m) << 8;
        QTest::newRow("wrn k=1") << QString("wrn") << 8;
    }
    void whole_models() {
        QFETCH(QString, name);
        QFETCH(int, size);
        expect_gradients_match(nn::build_model(name.toStdString(), 1, size, {.width = 1}),
                               Shape{3, 1, size, size}, 40);
    }

    void batch_norm_inference_uses_running_statistics() {
        // y = (x - running_mean) / sqrt(running_var + eps) * gamma + beta, per channel.
        GradientCheck check(std::make_unique<nn::BatchNorm>("bn", 2), Shape{3, 2, 2, 2});
        const float mean[2] = {0.5f, -1.0f}, var[2] = {4.0f, 0.25f};
        const float beta[2] = {0.1f, -0.2f}, gamma[2] = {2.0f, 3.0f};
        auto state = check.model().state();    // running_mean[2], running_var[2]
        auto params = check.model().params();  // backward order: beta[2], then gamma[2]
        for (int c = 0; c < 2; ++c) {
            state[std::size_t(c)] = mean[c];
            state[std::size_t(2 + c)] = var[c];
            params[std::size_t(c)] = beta[c];
            params[std::size_t(2 + c)] = gamma[c];
        }
        const std::vector<float> y = check.output(false);
        const auto& x = check.input();
        for (std::size_t i = 0; i < x.size(); ++i) {
            const int c = int(i / 4) % 2;
            const float expected =
                (x[i] - mean[c]) / std::sqrt(var[c] + 1e-5f) * gamma[c] + beta[c];
            QVERIFY2(std::abs(y[i] - expected) < 1e-5f, qPrintable(QString::number(i)));
        }
    }

    void batch_norm_training_updates_running_statistics() {
        // PyTorch: running = 0.9 running + 0.1 batch, with the unbiased batch variance.
        GradientCheck check(std::make_unique<nn::BatchNorm>("bn", 2), Shape{3, 2, 2, 2});
        check.output(true);
        const auto& x = check.input();
        for (int c = 0; c < 2; ++c) {
            double sum = 0, sq = 0;
            int n = 0;
            for (std::size_t i = 0; i < x.size(); ++i)
                if (int(i / 4) % 2 == c)
                    sum += x[i], sq += double(x[i]) * x[i], ++n;
            const double m = sum / n, unbiased = (sq - n * m * m) / (n - 1);
            QCOMPARE_LE(std::abs(check.model().state()[std::size_t(c)] - 0.1 * m), 1e-6);
            QCOMPARE_LE(
                std::abs(check.model().state()[std::size_t(2 + c)] - (0.9 + 0.1 * unbiased)), 1e-5);
        }
    }

    void dropout_is_identity_in_inference() {
        GradientCheck check(std::make_unique<nn::Dropout>("drop", 0.5f, 0), Shape{2, 3, 4, 4});
        const std::vector<float> y = check.output(false);
        QVERIFY(std::equal(y.begin(), y.end(), check.input().begin()));
        const std::vector<float> trained = check.output(true);
        const auto zeros = std::count(trained.begin(), trained.end(), 0.0f);
        QVERIFY2(zeros > 20 && zeros < 76, "about half of 96 elements dropped in training");
    }
};

QTEST_APPLESS_MAIN(LayerGradients)
#include "test_layer_gradients.moc"
