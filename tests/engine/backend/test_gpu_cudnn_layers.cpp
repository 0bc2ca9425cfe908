// The CUDA backend's cuDNN layers (convolution, batch norm, pooling) and its ReLU against the
// CPU backend: the same random inputs and parameters through both, forward and backward, and
// every output, input gradient, parameter gradient and running statistic within a relative
// error of 1e-4 (TF32 off: both sides compute in float, only the summation order differs).
// The CPU backend may hand back oneDNN's blocked layouts; its results are compared through its
// to_plain kernel, and dy reaches it in y's layout through the same kernel run backwards.
//
// Every test needs a GPU: the factories take a GpuContext, which only exists on a GPU, so
// nothing of these kernels (not even the argument checks) can be reached without one. Each test
// skips with the reason where no GPU can be used.

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/gpu_runtime.h"
#include "gpu_test_support.h"

using namespace scalelab;
using testing::cpu_plain_values;
using testing::random_values;
using testing::relative_error;
using testing::to_device;
using testing::to_host;

Q_DECLARE_METATYPE(scalelab::Shape)
Q_DECLARE_METATYPE(scalelab::PoolKind)

namespace {

constexpr double kTolerance = 1e-4;

// Fails the calling test unless `actual` is within kTolerance of `expected`, naming `what`.
#define REQUIRE_CLOSE(actual, expected, what)                                                 \
    do {                                                                                      \
        const double scalelab_error = relative_error(actual, expected);                       \
        QVERIFY2(scalelab_error <= kTolerance,                                                \
                 qPrintable(QString("%1: relative error %2").arg(what).arg(scalelab_error))); \
    } while (false)

// A GPU backend tensor's values (always plain NCHW).
std::vector<float> gpu_values(Backend& gpu, const Tensor& t) {
    return to_host(gpu, t.data, t.shape().numel());
}

// The plain values `plain` as a CPU tensor in the layout of `like` (a forward output), for the
// matching backward: the CPU's to_plain kernel run backwards converts a plain gradient to it.
// The kernel owns the converted buffer, so it travels with the tensor.
struct CpuTensorInLayout {
    std::unique_ptr<ReorderKernel> reorder;
    Tensor tensor;
};

CpuTensorInLayout cpu_in_layout_of(Backend& cpu, const TensorDesc& like,
                                   std::vector<float>& plain) {
    CpuTensorInLayout result{cpu.to_plain(like), {}};
    result.tensor = result.reorder->backward(Tensor{TensorDesc{like.shape, nullptr}, plain.data()});
    return result;
}

std::unique_ptr<Backend> gpu_backend(bool deterministic = false, bool tf32 = false) {
    return make_gpu_backend({.gpu = 0, .tf32 = tf32, .deterministic = deterministic});
}

Tensor plain_tensor(const Shape& shape, float* data) {
    return Tensor{TensorDesc{shape, nullptr}, data};
}

// n values in [offset - scale, offset + scale).
std::vector<float> values_around(std::size_t n, std::uint32_t seed, float offset, float scale) {
    std::vector<float> v = random_values(n, seed, scale);
    for (float& x : v)
        x += offset;
    return v;
}

// Max pooling's gradient seen window by window, for windows that tile the input (kernel ==
// stride, no padding): for each output, the part of dx on the positions holding its window's
// maximum, summed (`routed`, which should be dy); the largest |dx| anywhere else (`stray`,
// which should be 0); and how many windows have their maximum more than once (`tied`).
struct MaxPoolRouting {
    std::vector<float> routed;
    float stray = 0;
    int tied = 0;
};

MaxPoolRouting max_pool_routing(const std::vector<float>& x, const std::vector<float>& dx,
                                const Shape& x_shape, int window) {
    const int out_h = x_shape.h / window, out_w = x_shape.w / window;
    MaxPoolRouting r;
    r.routed.reserve(std::size_t(x_shape.n) * x_shape.c * out_h * out_w);
    for (int plane = 0; plane < x_shape.n * x_shape.c; ++plane)
        for (int oh = 0; oh < out_h; ++oh)
            for (int ow = 0; ow < out_w; ++ow) {
                const auto at = [&](int i, int j) {
                    return (std::size_t(plane) * x_shape.h + std::size_t(oh * window + i)) *
                               x_shape.w +
                           std::size_t(ow * window + j);
                };
                float top = x[at(0, 0)];
                for (int i = 0; i < window; ++i)
                    for (int j = 0; j < window; ++j)
                        top = std::max(top, x[at(i, j)]);
                float routed = 0;
                int maxima = 0;
                for (int i = 0; i < window; ++i)
                    for (int j = 0; j < window; ++j) {
                        if (x[at(i, j)] == top) {
                            routed += dx[at(i, j)];
                            ++maxima;
                        } else {
                            r.stray = std::max(r.stray, std::abs(dx[at(i, j)]));
                        }
                    }
                r.routed.push_back(routed);
                r.tied += maxima > 1;
            }
    return r;
}

}  // namespace

class TestGpuCudnnLayers : public QObject {
    Q_OBJECT

  private slots:
    void convolution_matches_the_cpu_data() {
        QTest::addColumn<Shape>("x_shape");
        QTest::addColumn<int>("out_channels");
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("padding");
        QTest::addColumn<bool>("bias");
        QTest::newRow("3x3 stride 1 pad 1") << Shape{2, 3, 8, 8} << 8 << 3 << 1 << 1 << true;
        QTest::newRow("3x3 stride 2 pad 1, odd side")
            << Shape{3, 8, 9, 9} << 16 << 3 << 2 << 1 << true;
        QTest::newRow("1x1 no bias") << Shape{2, 16, 6, 6} << 32 << 1 << 1 << 0 << false;
        QTest::newRow("1x1 stride 2 (projection)")
            << Shape{2, 8, 8, 8} << 16 << 1 << 2 << 0 << true;
        QTest::newRow("5x5 no padding, wide") << Shape{4, 32, 12, 12} << 64 << 5 << 1 << 0 << true;
    }

    void convolution_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(Shape, x_shape);
        QFETCH(int, out_channels);
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(int, padding);
        QFETCH(bool, bias);
        const Conv2dConfig cfg{x_shape.c, out_channels, kernel, stride, padding, bias};
        auto gpu = gpu_backend();
        cpu::CpuBackend cpu(1);

        auto x = random_values(x_shape.numel(), 1);
        auto w = random_values(std::size_t(out_channels) * x_shape.c * kernel * kernel, 2, 0.3f);
        auto b = random_values(std::size_t(out_channels), 3);

        auto cpu_conv = cpu.conv2d(cfg, TensorDesc{x_shape, nullptr});
        const Tensor cpu_y =
            cpu_conv->forward(plain_tensor(x_shape, x.data()), w.data(), bias ? b.data() : nullptr);
        const auto expected_y = cpu_plain_values(cpu, cpu_y);
        auto dy = random_values(cpu_y.shape().numel(), 4);
        auto cpu_dy = cpu_in_layout_of(cpu, cpu_y.desc, dy);
        std::vector<float> expected_dw(w.size()), expected_db(b.size());
        const Tensor cpu_dx = cpu_conv->backward(cpu_dy.tensor, w.data(), expected_dw.data(),
                                                 bias ? expected_db.data() : nullptr, true);
        const auto expected_dx = cpu_plain_values(cpu, cpu_dx);

        const auto gx = to_device(*gpu, x);
        const auto gw = to_device(*gpu, w);
        const auto gb = to_device(*gpu, b);
        const auto gdy = to_device(*gpu, dy);
        const auto gdw = gpu->allocate(w.size());
        const auto gdb = gpu->allocate(b.size());
        auto gpu_conv = gpu->conv2d(cfg, TensorDesc{x_shape, nullptr});
        const Tensor gpu_y = gpu_conv->forward(plain_tensor(x_shape, gx.data()), gw.data(),
                                               bias ? gb.data() : nullptr);
        QVERIFY(gpu_y.desc.plain());
        QVERIFY(gpu_y.shape() == cpu_y.shape());
        REQUIRE_CLOSE(gpu_values(*gpu, gpu_y), expected_y, "y");

        const Tensor gpu_dx = gpu_conv->backward(plain_tensor(gpu_y.shape(), gdy.data()), gw.data(),
                                                 gdw.data(), bias ? gdb.data() : nullptr, true);
        QVERIFY(gpu_dx.shape() == x_shape);
        REQUIRE_CLOSE(gpu_values(*gpu, gpu_dx), expected_dx, "dx");
        const auto dw = to_host(*gpu, gdw.data(), w.size());
        REQUIRE_CLOSE(dw, expected_dw, "dweight");
        if (bias)
            REQUIRE_CLOSE(to_host(*gpu, gdb.data(), b.size()), expected_db, "dbias");

        // Again without dx: nothing comes back, and the weight gradient is written afresh (the
        // same values as before, not twice them).
        const Tensor no_dx = gpu_conv->backward(plain_tensor(gpu_y.shape(), gdy.data()), gw.data(),
                                                gdw.data(), bias ? gdb.data() : nullptr, false);
        QVERIFY(no_dx.data == nullptr);
        REQUIRE_CLOSE(to_host(*gpu, gdw.data(), w.size()), expected_dw, "dweight written again");
        if (bias)
            REQUIRE_CLOSE(to_host(*gpu, gdb.data(), b.size()), expected_db, "dbias written again");
    }

    void deterministic_convolution_repeats_bit_for_bit() {
        SCALELAB_SKIP_WITHOUT_GPU();
        // Large enough that cuDNN has non-deterministic (atomic) backward algorithms to refuse.
        // Each backend chooses its algorithms afresh, as each run does: a run repeats bit for bit
        // only if both the algorithms and their arithmetic do.
        const Shape x_shape{8, 32, 16, 16};
        const Conv2dConfig cfg{32, 32, 3, 1, 1, true};
        const auto outputs_twice = [&] {
            auto gpu = gpu_backend(/*deterministic=*/true);
            const auto gx = to_device(*gpu, random_values(x_shape.numel(), 11));
            const auto gw = to_device(*gpu, random_values(std::size_t(32) * 32 * 9, 12, 0.1f));
            const auto gb = to_device(*gpu, random_values(32, 13));
            const auto gdy = to_device(*gpu, random_values(x_shape.numel(), 14));
            const auto gdw = gpu->allocate(std::size_t(32) * 32 * 9);
            const auto gdb = gpu->allocate(32);
            auto conv = gpu->conv2d(cfg, TensorDesc{x_shape, nullptr});
            auto run = [&] {
                const Tensor y =
                    conv->forward(plain_tensor(x_shape, gx.data()), gw.data(), gb.data());
                auto out = gpu_values(*gpu, y);
                const Tensor dx = conv->backward(plain_tensor(x_shape, gdy.data()), gw.data(),
                                                 gdw.data(), gdb.data(), true);
                for (const auto& v : {gpu_values(*gpu, dx), to_host(*gpu, gdw.data(), gdw.size()),
                                      to_host(*gpu, gdb.data(), gdb.size())})
                    out.insert(out.end(), v.begin(), v.end());
                return out;
            };
            return std::pair{run(), run()};
        };
        const auto [first, again] = outputs_twice();
        QVERIFY2(first == again, "one kernel, run twice");
        for (int backend = 2; backend <= 4; ++backend)
            QVERIFY2(outputs_twice().first == first,
                     qPrintable(QString("backend %1 against the first").arg(backend)));
    }

    void convolution_with_tf32_is_close() {
        SCALELAB_SKIP_WITHOUT_GPU();
        // TF32 keeps 10 mantissa bits of each product's inputs: relative errors of about 1e-3
        // over a sum of 288 products, far from anything a wrong algorithm would give.
        const Shape x_shape{4, 32, 8, 8};
        const Conv2dConfig cfg{32, 16, 3, 1, 1, true};
        auto gpu = gpu_backend(false, /*tf32=*/true);
        cpu::CpuBackend cpu(1);
        auto x = random_values(x_shape.numel(), 21);
        auto w = random_values(std::size_t(16) * 32 * 9, 22, 0.1f);
        auto b = random_values(16, 23);
        auto cpu_conv = cpu.conv2d(cfg, TensorDesc{x_shape, nullptr});
        const auto expected = cpu_plain_values(
            cpu, cpu_conv->forward(plain_tensor(x_shape, x.data()), w.data(), b.data()));
        const auto gx = to_device(*gpu, x);
        const auto gw = to_device(*gpu, w);
        const auto gb = to_device(*gpu, b);
        auto gpu_conv = gpu->conv2d(cfg, TensorDesc{x_shape, nullptr});
        const auto y = gpu_values(
            *gpu, gpu_conv->forward(plain_tensor(x_shape, gx.data()), gw.data(), gb.data()));
        QVERIFY2(relative_error(y, expected) <= 1e-2,
                 qPrintable(QString::number(relative_error(y, expected))));
    }

    void batch_norm_matches_the_cpu_data() {
        QTest::addColumn<bool>("fused_relu");
        QTest::addColumn<bool>("training");
        QTest::newRow("training") << false << true;
        QTest::newRow("training, fused relu") << true << true;
        QTest::newRow("inference") << false << false;
        QTest::newRow("inference, fused relu") << true << false;
    }

    void batch_norm_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(bool, fused_relu);
        QFETCH(bool, training);
        const Shape x_shape{4, 6, 5, 7};
        const BatchNormConfig cfg{.channels = 6, .fused_relu = fused_relu};
        const auto c = std::size_t(cfg.channels);
        auto gpu = gpu_backend();
        cpu::CpuBackend cpu(1);

        // Channels away from zero mean and unit variance, so that both statistics matter.
        auto x = values_around(x_shape.numel(), 31, 0.5f, 2.0f);
        auto scale = values_around(c, 32, 1.0f, 0.5f);
        auto shift = random_values(c, 33);
        const auto initial_mean = random_values(c, 34);
        const auto initial_var = values_around(c, 35, 1.0f, 0.5f);
        auto dy = random_values(x_shape.numel(), 36);

        auto cpu_mean = initial_mean;
        auto cpu_var = initial_var;
        auto cpu_bn = cpu.batch_norm(cfg, TensorDesc{x_shape, nullptr}, training);
        const Tensor cpu_y = cpu_bn->forward(plain_tensor(x_shape, x.data()), scale.data(),
                                             shift.data(), cpu_mean.data(), cpu_var.data());
        const auto expected_y = cpu_plain_values(cpu, cpu_y);

        const auto gx = to_device(*gpu, x);
        const auto gscale = to_device(*gpu, scale);
        const auto gshift = to_device(*gpu, shift);
        const auto gmean = to_device(*gpu, initial_mean);
        const auto gvar = to_device(*gpu, initial_var);
        auto gpu_bn = gpu->batch_norm(cfg, TensorDesc{x_shape, nullptr}, training);
        const Tensor gpu_y = gpu_bn->forward(plain_tensor(x_shape, gx.data()), gscale.data(),
                                             gshift.data(), gmean.data(), gvar.data());
        QVERIFY(gpu_y.shape() == x_shape);
        const auto y = gpu_values(*gpu, gpu_y);
        REQUIRE_CLOSE(y, expected_y, "y");
        if (fused_relu)
            QVERIFY(std::count(y.begin(), y.end(), 0.0f) > 0);  // the ReLU clipped something
        // Updated in training (to the same numbers as the CPU's), untouched in inference.
        REQUIRE_CLOSE(to_host(*gpu, gmean.data(), c), cpu_mean, "running mean");
        REQUIRE_CLOSE(to_host(*gpu, gvar.data(), c), cpu_var, "running variance");
        if (!training) {
            QVERIFY(cpu_mean == initial_mean);
            return;
        }
        QVERIFY(cpu_mean != initial_mean);

        auto cpu_dy = cpu_in_layout_of(cpu, cpu_y.desc, dy);
        std::vector<float> expected_dscale(c), expected_dshift(c);
        const auto expected_dx =
            cpu_plain_values(cpu, cpu_bn->backward(cpu_dy.tensor, scale.data(),
                                                   expected_dscale.data(), expected_dshift.data()));
        const auto gdy = to_device(*gpu, dy);
        const auto gdscale = gpu->allocate(c);
        const auto gdshift = gpu->allocate(c);
        const Tensor gpu_dx = gpu_bn->backward(plain_tensor(x_shape, gdy.data()), gscale.data(),
                                               gdscale.data(), gdshift.data());
        REQUIRE_CLOSE(gpu_values(*gpu, gpu_dx), expected_dx, "dx");
        REQUIRE_CLOSE(to_host(*gpu, gdscale.data(), c), expected_dscale, "dscale");
        REQUIRE_CLOSE(to_host(*gpu, gdshift.data(), c), expected_dshift, "dshift");
    }

    void pooling_matches_the_cpu_data() {
        QTest::addColumn<PoolKind>("kind");
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("stride");
        QTest::addColumn<int>("padding");
        QTest::addColumn<Shape>("x_shape");
        QTest::addColumn<bool>("ties");
        const auto max = PoolKind::Max;
        const auto avg = PoolKind::Average;
        QTest::newRow("max 2x2 stride 2") << max << 2 << 2 << 0 << Shape{2, 3, 8, 8} << false;
        QTest::newRow("max 3x3 stride 2 pad 1 (overlapping)")
            << max << 3 << 2 << 1 << Shape{2, 4, 9, 9} << false;
        QTest::newRow("max 2x2 after a ReLU (tied zeros)")
            << max << 2 << 2 << 0 << Shape{2, 3, 8, 8} << true;
        QTest::newRow("average 3x3 stride 1 pad 1 (padding counts)")
            << avg << 3 << 1 << 1 << Shape{2, 3, 7, 7} << false;
        QTest::newRow("average 2x2 stride 2, odd side (rounded down)")
            << avg << 2 << 2 << 0 << Shape{2, 3, 7, 7} << false;
        QTest::newRow("global average") << avg << 0 << 1 << 0 << Shape{2, 4, 5, 6} << false;
        QTest::newRow("global max") << max << 0 << 1 << 0 << Shape{2, 4, 5, 6} << false;
    }

    void pooling_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(PoolKind, kind);
        QFETCH(int, kernel);
        QFETCH(int, stride);
        QFETCH(int, padding);
        QFETCH(Shape, x_shape);
        QFETCH(bool, ties);
        const PoolConfig cfg{kind, kernel, stride, padding};
        auto gpu = gpu_backend();
        cpu::CpuBackend cpu(1);

        auto x = random_values(x_shape.numel(), 41);
        if (ties)
            for (float& v : x)
                v = std::max(v, 0.0f);
        auto cpu_pool = cpu.pool(cfg, TensorDesc{x_shape, nullptr});
        const Tensor cpu_y = cpu_pool->forward(plain_tensor(x_shape, x.data()));
        const auto expected_y = cpu_plain_values(cpu, cpu_y);
        auto dy = random_values(cpu_y.shape().numel(), 42);
        auto cpu_dy = cpu_in_layout_of(cpu, cpu_y.desc, dy);
        const auto expected_dx = cpu_plain_values(cpu, cpu_pool->backward(cpu_dy.tensor));

        const auto gx = to_device(*gpu, x);
        const auto gdy = to_device(*gpu, dy);
        auto gpu_pool = gpu->pool(cfg, TensorDesc{x_shape, nullptr});
        const Tensor gpu_y = gpu_pool->forward(plain_tensor(x_shape, gx.data()));
        QVERIFY(gpu_y.shape() == cpu_y.shape());
        REQUIRE_CLOSE(gpu_values(*gpu, gpu_y), expected_y, "y");
        const Tensor gpu_dx = gpu_pool->backward(plain_tensor(gpu_y.shape(), gdy.data()));
        QVERIFY(gpu_dx.shape() == x_shape);
        if (!ties) {
            REQUIRE_CLOSE(gpu_values(*gpu, gpu_dx), expected_dx, "dx");
            return;
        }
        // Where a window's maximum is tied, dy may go to any of its copies: oneDNN gives it to
        // the first, cuDNN does not say, and the ReLU before the pool zeroes it at every one
        // (they are all 0). So each window's dy must reach its maxima, and nothing else.
        QVERIFY(kernel == stride && padding == 0);
        const MaxPoolRouting routing =
            max_pool_routing(x, gpu_values(*gpu, gpu_dx), x_shape, kernel);
        QVERIFY2(routing.tied > 0, "the input has no window with a tied maximum");
        REQUIRE_CLOSE(routing.routed, dy, "dy reaching each window's maxima");
        QCOMPARE(routing.stray, 0.0f);
        const MaxPoolRouting reference = max_pool_routing(x, expected_dx, x_shape, kernel);
        REQUIRE_CLOSE(reference.routed, dy, "the CPU's dy reaching each window's maxima");
        QCOMPARE(reference.stray, 0.0f);
    }

    void relu_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const Shape shape{2, 3, 4, 5};
        auto gpu = gpu_backend();
        cpu::CpuBackend cpu(1);
        auto x = random_values(shape.numel(), 51);
        x[0] = 0.0f;  // the gradient at exactly 0 is 0 on both
        auto dy = random_values(shape.numel(), 52);

        auto cpu_relu = cpu.relu(TensorDesc{shape, nullptr});
        const Tensor cpu_y = cpu_relu->forward(plain_tensor(shape, x.data()));
        const auto expected_y = cpu_plain_values(cpu, cpu_y);
        auto cpu_dy = cpu_in_layout_of(cpu, cpu_y.desc, dy);
        const auto expected_dx = cpu_plain_values(cpu, cpu_relu->backward(cpu_dy.tensor));

        const auto gx = to_device(*gpu, x);
        const auto gdy = to_device(*gpu, dy);
        auto gpu_relu = gpu->relu(TensorDesc{shape, nullptr});
        const auto y = gpu_values(*gpu, gpu_relu->forward(plain_tensor(shape, gx.data())));
        const auto dx = gpu_values(*gpu, gpu_relu->backward(plain_tensor(shape, gdy.data())));
        // One comparison or one multiplication by 0 per value: exactly the CPU's numbers.
        QCOMPARE(relative_error(y, expected_y), 0.0);
        QCOMPARE(relative_error(dx, expected_dx), 0.0);
        QCOMPARE(dx[0], 0.0f);
    }
};

QTEST_APPLESS_MAIN(TestGpuCudnnLayers)
#include "test_gpu_cudnn_layers.moc"
