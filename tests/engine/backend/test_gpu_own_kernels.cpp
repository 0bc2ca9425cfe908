// The CUDA backend's own kernels (linear on cuBLAS, synchronised batch norm, dropout, add, the
// plain pass-through, softmax cross-entropy) against the CPU backend on random inputs: forward
// and backward within a relative error of 1e-4 (TF32 off), dropout's mask element for element,
// the loss's correct count exactly; and the input stage (pinned memory, copy stream) delivering
// each batch, in turn, to the work after it; and the timestamps the time breakdown is measured
// with. Each GPU test skips with the reason where no GPU can
// be used; the row-major to column-major GEMM mapping the linear layer relies on is checked on
// the host.

#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cuda/module/row_major_gemm.h"
#include "backend/gpu_runtime.h"
#include "error.h"
#include "gpu_test_support.h"

using namespace scalelab;
using namespace scalelab::testing;

Q_DECLARE_METATYPE(scalelab::Shape)

namespace {

constexpr double kTolerance = 1e-4;

// BLAS's column-major sgemm, C := op(a) op(b) (alpha 1, beta 0), straight from its definition:
// element (i, j) of a column-major matrix with leading dimension ld is at i + j ld.
void reference_column_major_sgemm(const cuda::ColumnMajorGemm& g, float* c) {
    for (int i = 0; i < g.m; ++i)
        for (int j = 0; j < g.n; ++j) {
            double sum = 0;
            for (int l = 0; l < g.k; ++l) {
                const float a = g.transpose_a ? g.a[l + i * g.lda] : g.a[i + l * g.lda];
                const float b = g.transpose_b ? g.b[j + l * g.ldb] : g.b[l + j * g.ldb];
                sum += double(a) * b;
            }
            c[i + j * g.ldc] = float(sum);
        }
}

// Element (r, c) of op(M) for a row-major operand.
float element(const cuda::RowMajorOperand& m, int r, int c) {
    return m.transposed ? m.data[c * m.cols + r] : m.data[r * m.cols + c];
}

// A layout that is not plain, for the factories' layout checks.
class OtherLayout final : public Layout {
  public:
    explicit OtherLayout(std::size_t bytes) : bytes_(bytes) {}
    std::size_t bytes() const override { return bytes_; }
    bool same_as(const Layout& other) const override { return &other == this; }
    std::string name() const override { return "blocked"; }

  private:
    std::size_t bytes_;
};

TensorDesc plain(Shape shape) {
    return TensorDesc{shape, nullptr};
}

// The kind of the engine error f throws; none when it throws none.
std::optional<ErrorKind> thrown_kind(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.kind();
    }
    return std::nullopt;
}

// A GPU result on the host; none (so that every comparison fails) when it is not plain.
std::vector<float> gpu_host(Backend& gpu, const Tensor& t) {
    if (!t.desc.plain())
        return {};
    return to_host(gpu, t.data, t.shape().numel());
}

// Both backends' copies of one host array.
struct Both {
    DeviceBuffer cpu, gpu;
    Both(Backend& c, Backend& g, std::span<const float> host)
        : cpu(to_device(c, host)), gpu(to_device(g, host)) {}
};

}  // namespace

class TestGpuOwnKernels : public QObject {
    Q_OBJECT

    std::unique_ptr<cpu::CpuBackend> cpu_;
    std::unique_ptr<Backend> gpu_;

    void make_backends() {
        cpu_ = std::make_unique<cpu::CpuBackend>(1);
        gpu_ = make_gpu_backend({.gpu = 0});
    }

  private slots:
    void cleanup() {
        gpu_.reset();
        cpu_.reset();
    }

    // No GPU needed: the mapping gives the row-major product for every transpose combination.
    void column_major_gemm_gives_the_row_major_product_data() {
        QTest::addColumn<bool>("transpose_a");
        QTest::addColumn<bool>("transpose_b");
        QTest::newRow("A B") << false << false;
        QTest::newRow("A B^T (linear forward)") << false << true;
        QTest::newRow("A^T B (linear weight gradient)") << true << false;
        QTest::newRow("A^T B^T") << true << true;
    }
    void column_major_gemm_gives_the_row_major_product() {
        QFETCH(bool, transpose_a);
        QFETCH(bool, transpose_b);
        const int M = 5, K = 7, N = 3;  // op(A) is M x K, op(B) is K x N
        const std::vector<float> a = random_values(std::size_t(M) * K, 1);
        const std::vector<float> b = random_values(std::size_t(K) * N, 2);
        const cuda::RowMajorOperand A{a.data(), transpose_a ? K : M, transpose_a ? M : K,
                                      transpose_a};
        const cuda::RowMajorOperand B{b.data(), transpose_b ? N : K, transpose_b ? K : N,
                                      transpose_b};
        std::vector<float> expected(std::size_t(M) * N), actual(expected.size(), NAN);
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double sum = 0;
                for (int l = 0; l < K; ++l)
                    sum += double(element(A, i, l)) * element(B, l, j);
                expected[std::size_t(i * N + j)] = float(sum);
            }
        reference_column_major_sgemm(cuda::column_major_gemm(A, B), actual.data());
        QCOMPARE(actual, expected);
    }

    void linear_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        const Shape xs{8, 4, 3, 3};  // flattened: 36 features
        const LinearConfig cfg{.in_features = 36, .out_features = 10};
        const std::vector<float> x = random_values(xs.numel(), 3);
        const std::vector<float> w = random_values(std::size_t(10) * 36, 4, 0.3f);
        const std::vector<float> b = random_values(10, 5);
        const std::vector<float> dy = random_values(std::size_t(8) * 10, 6);
        Both bx(*cpu_, *gpu_, x), bw(*cpu_, *gpu_, w), bb(*cpu_, *gpu_, b), bdy(*cpu_, *gpu_, dy);
        DeviceBuffer cdw = cpu_->allocate(w.size()), gdw = gpu_->allocate(w.size());
        DeviceBuffer cdb = cpu_->allocate(b.size()), gdb = gpu_->allocate(b.size());
        auto ck = cpu_->linear(cfg, plain(xs));
        auto gk = gpu_->linear(cfg, plain(xs));

        const Tensor cy = ck->forward({plain(xs), bx.cpu.data()}, bw.cpu.data(), bb.cpu.data());
        const Tensor gy = gk->forward({plain(xs), bx.gpu.data()}, bw.gpu.data(), bb.gpu.data());
        QCOMPARE(gy.shape(), cy.shape());
        QVERIFY(relative_error(gpu_host(*gpu_, gy), cpu_plain_values(*cpu_, cy)) <= kTolerance);

        const Tensor cdx =
            ck->backward({cy.desc, bdy.cpu.data()}, bw.cpu.data(), cdw.data(), cdb.data(), true);
        const Tensor gdx =
            gk->backward({gy.desc, bdy.gpu.data()}, bw.gpu.data(), gdw.data(), gdb.data(), true);
        QCOMPARE(gdx.shape(), xs);
        QVERIFY(relative_error(gpu_host(*gpu_, gdx), cpu_plain_values(*cpu_, cdx)) <= kTolerance);
        QVERIFY(relative_error(to_host(*gpu_, gdw.data(), w.size()),
                               to_host(*cpu_, cdw.data(), w.size())) <= kTolerance);
        QVERIFY(relative_error(to_host(*gpu_, gdb.data(), b.size()),
                               to_host(*cpu_, cdb.data(), b.size())) <= kTolerance);

        // Without dx the parameter gradients are the same, written again (not accumulated).
        QVERIFY(
            gk->backward({gy.desc, bdy.gpu.data()}, bw.gpu.data(), gdw.data(), gdb.data(), false)
                .data == nullptr);
        QVERIFY(relative_error(to_host(*gpu_, gdw.data(), w.size()),
                               to_host(*cpu_, cdw.data(), w.size())) <= kTolerance);
    }

    void sync_batch_norm_matches_the_cpu_data() {
        QTest::addColumn<Shape>("shape");
        QTest::addColumn<bool>("fused_relu");
        QTest::newRow("small planes") << Shape{4, 6, 5, 5} << false;
        QTest::newRow("small planes, relu") << Shape{4, 6, 5, 5} << true;
        QTest::newRow("planes of several warps, relu") << Shape{2, 3, 20, 20} << true;
        QTest::newRow("1x1 planes") << Shape{16, 5, 1, 1} << false;
    }
    void sync_batch_norm_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(Shape, shape);
        QFETCH(bool, fused_relu);
        make_backends();
        const int C = shape.c;
        const auto channels = std::size_t(C);
        const BatchNormConfig cfg{.channels = C, .fused_relu = fused_relu};
        // Shifted off zero, so that the variance is not all of the second moment.
        std::vector<float> x = random_values(shape.numel(), 7, 2.0f);
        for (float& v : x)
            v += 0.5f;
        const std::vector<float> scale = random_values(channels, 8);
        const std::vector<float> shift = random_values(channels, 9);
        std::vector<float> running_mean = random_values(channels, 10);
        std::vector<float> running_var = random_values(channels, 11);
        for (float& v : running_var)
            v += 1.5f;
        const std::vector<float> dy = random_values(shape.numel(), 12);
        Both bx(*cpu_, *gpu_, x), bscale(*cpu_, *gpu_, scale), bshift(*cpu_, *gpu_, shift);
        Both brm(*cpu_, *gpu_, running_mean), brv(*cpu_, *gpu_, running_var);
        Both bdy(*cpu_, *gpu_, dy);
        DeviceBuffer cdscale = cpu_->allocate(channels), gdscale = gpu_->allocate(channels);
        DeviceBuffer cdshift = cpu_->allocate(channels), gdshift = gpu_->allocate(channels);
        auto ck = cpu_->sync_batch_norm(cfg, plain(shape));
        auto gk = gpu_->sync_batch_norm(cfg, plain(shape));
        QCOMPARE(gk->local_count(), ck->local_count());

        // Phase 1: local moments.
        std::vector<float> cmoments(2 * channels), gmoments(2 * channels);
        ck->local_moments({plain(shape), bx.cpu.data()}, cmoments);
        gk->local_moments({plain(shape), bx.gpu.data()}, gmoments);
        QVERIFY(relative_error(gmoments, cmoments) <= kTolerance);

        // Phase 2: forward with "global" statistics of three such devices (the same numbers
        // handed to both backends).
        const double n = 3 * ck->local_count();
        const float* mean = cmoments.data();
        const float* var = cmoments.data() + C;
        const Tensor cy = ck->forward(mean, var, n, bscale.cpu.data(), bshift.cpu.data(),
                                      brm.cpu.data(), brv.cpu.data());
        const Tensor gy = gk->forward(mean, var, n, bscale.gpu.data(), bshift.gpu.data(),
                                      brm.gpu.data(), brv.gpu.data());
        QVERIFY(relative_error(gpu_host(*gpu_, gy), cpu_plain_values(*cpu_, cy)) <= kTolerance);
        QVERIFY(relative_error(to_host(*gpu_, brm.gpu.data(), channels),
                               to_host(*cpu_, brm.cpu.data(), channels)) <= kTolerance);
        QVERIFY(relative_error(to_host(*gpu_, brv.gpu.data(), channels),
                               to_host(*cpu_, brv.cpu.data(), channels)) <= kTolerance);

        // Phase 3: local gradient sums and the parameter gradients.
        std::vector<float> csums(2 * channels), gsums(2 * channels);
        ck->gradient_sums({cy.desc, bdy.cpu.data()}, cdscale.data(), cdshift.data(), csums);
        gk->gradient_sums({gy.desc, bdy.gpu.data()}, gdscale.data(), gdshift.data(), gsums);
        QVERIFY(relative_error(gsums, csums) <= kTolerance);
        QVERIFY(relative_error(to_host(*gpu_, gdscale.data(), channels),
                               to_host(*cpu_, cdscale.data(), channels)) <= kTolerance);
        QVERIFY(relative_error(to_host(*gpu_, gdshift.data(), channels),
                               to_host(*cpu_, cdshift.data(), channels)) <= kTolerance);

        // Phase 4: dx from "global" sums (three times this device's, with the count of three).
        std::vector<float> global_sums = csums;
        for (float& s : global_sums)
            s *= 3;
        const Tensor cdx = ck->backward(bscale.cpu.data(), global_sums, n);
        const Tensor gdx = gk->backward(bscale.gpu.data(), global_sums, n);
        QVERIFY(relative_error(gpu_host(*gpu_, gdx), cpu_plain_values(*cpu_, cdx)) <= kTolerance);
    }

    void dropout_matches_the_cpu_data() {
        QTest::addColumn<float>("p");
        QTest::newRow("p = 0") << 0.0f;
        QTest::newRow("p = 0.3") << 0.3f;
        QTest::newRow("p = 1") << 1.0f;
    }
    void dropout_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(float, p);
        make_backends();
        const Shape shape{3, 5, 7, 9};
        std::vector<float> x = random_values(shape.numel(), 13);
        for (float& v : x)
            if (v == 0.0f)
                v = 1.0f;  // a zero in y then means dropped
        const std::vector<float> dy = random_values(shape.numel(), 14);
        Both bx(*cpu_, *gpu_, x), bdy(*cpu_, *gpu_, dy);
        auto ck = cpu_->dropout(plain(shape));
        auto gk = gpu_->dropout(plain(shape));
        const std::uint64_t seed = 0x5eed;
        const std::vector<float> cy =
            cpu_plain_values(*cpu_, ck->forward({plain(shape), bx.cpu.data()}, p, seed));
        const Tensor gyt = gk->forward({plain(shape), bx.gpu.data()}, p, seed);
        const std::vector<float> gy = gpu_host(*gpu_, gyt);
        QCOMPARE(gy.size(), cy.size());
        for (std::size_t i = 0; i < gy.size(); ++i)
            QCOMPARE(gy[i] == 0.0f, cy[i] == 0.0f);
        QVERIFY(relative_error(gy, cy) <= kTolerance);
        const Tensor cdx = ck->backward({plain(shape), bdy.cpu.data()});
        const Tensor gdx = gk->backward({gyt.desc, bdy.gpu.data()});
        QVERIFY(relative_error(gpu_host(*gpu_, gdx), cpu_plain_values(*cpu_, cdx)) <= kTolerance);
    }

    void add_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        const Shape shape{2, 3, 4, 5};
        const std::vector<float> a = random_values(shape.numel(), 15);
        const std::vector<float> b = random_values(shape.numel(), 16);
        const std::vector<float> dy = random_values(shape.numel(), 17);
        Both ba(*cpu_, *gpu_, a), bb(*cpu_, *gpu_, b), bdy(*cpu_, *gpu_, dy);
        auto ck = cpu_->add(plain(shape), plain(shape));
        auto gk = gpu_->add(plain(shape), plain(shape));
        const Tensor cy = ck->forward({plain(shape), ba.cpu.data()}, {plain(shape), bb.cpu.data()});
        const Tensor gy = gk->forward({plain(shape), ba.gpu.data()}, {plain(shape), bb.gpu.data()});
        QVERIFY(relative_error(gpu_host(*gpu_, gy), cpu_plain_values(*cpu_, cy)) <= kTolerance);
        const Tensor gdb = gk->gradient_for_b({gy.desc, bdy.gpu.data()});
        QCOMPARE(gdb.shape(), shape);
        QVERIFY(relative_error(
                    gpu_host(*gpu_, gdb),
                    cpu_plain_values(*cpu_, ck->gradient_for_b({cy.desc, bdy.cpu.data()}))) <=
                kTolerance);
    }

    void to_plain_passes_plain_tensors_through() {
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        const Shape shape{2, 3, 4, 5};
        const std::vector<float> x = random_values(shape.numel(), 18);
        DeviceBuffer gx = to_device(*gpu_, x);
        auto gk = gpu_->to_plain(plain(shape));
        const Tensor y = gk->forward({plain(shape), gx.data()});
        QCOMPARE(y.data, gx.data());
        QVERIFY(y.desc.plain());
        QCOMPARE(y.shape(), shape);
        const Tensor dx = gk->backward({plain(shape), gx.data()});
        QCOMPARE(dx.data, gx.data());
        QCOMPARE(gpu_host(*gpu_, y), x);
    }

    // Batches of several sizes, staged one after another through the two slots: each is what the
    // work given after it reads (the compute stream waits for its copy), and a batch too large
    // for the stage is refused before anything is copied.
    void input_stage_delivers_each_batch_to_the_work_after_it() {
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        const auto stage = gpu_->input_stage(1000);
        for (std::uint32_t i = 0; i < 5; ++i) {
            const std::vector<float> batch = random_values(1000 - 100 * i, 40 + i);
            const float* staged = stage->stage(batch);
            QCOMPARE(testing::to_host(*gpu_, staged, batch.size()), batch);
        }
        try {
            stage->stage(std::vector<float>(1001, 0.0f));
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Internal);
        }
    }

    // A GPU timestamp is an event on the compute stream: the time between two is the GPU's time
    // for the work enqueued between them (not the host's time to enqueue it: marking waits for
    // nothing), and a GPU's timestamp is compared with no other backend's.
    void timestamps_time_the_work_between_them() {
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        using Clock = std::chrono::steady_clock;
        using Seconds = std::chrono::duration<double>;
        const std::size_t big = std::size_t{1} << 26;  // 256 MB: ~0.1 ms a copy
        const DeviceBuffer from = gpu_->allocate(big), to = gpu_->allocate(big);
        const auto idle = gpu_->make_fence();  // allocate's zero-fills done first
        idle->mark();
        idle->wait();
        const auto start = gpu_->make_timestamp(), end = gpu_->make_timestamp();
        const auto host_start = Clock::now();
        start->mark();
        for (int i = 0; i < 200; ++i)
            gpu_->copy(from.span(), to.span());
        end->mark();
        const double enqueued = Seconds(Clock::now() - host_start).count();
        const double measured = end->seconds_since(*start);
        const double waited = Seconds(Clock::now() - host_start).count();
        QVERIFY2(measured > enqueued && measured <= waited,
                 qPrintable(QString("the GPU's %1 s against %2 s to enqueue, %3 s to finish")
                                .arg(measured)
                                .arg(enqueued)
                                .arg(waited)));
        const auto on_the_cpu = cpu_->make_timestamp();
        on_the_cpu->mark();
        const std::optional<ErrorKind> internal = ErrorKind::Internal;
        QCOMPARE(thrown_kind([&] { end->seconds_since(*on_the_cpu); }), internal);
        QCOMPARE(thrown_kind([&] { on_the_cpu->seconds_since(*start); }), internal);
    }

    void softmax_cross_entropy_matches_the_cpu_data() {
        QTest::addColumn<int>("batch");
        QTest::addColumn<int>("classes");
        QTest::addColumn<float>("smoothing");
        QTest::newRow("10 classes") << 16 << 10 << 0.0f;
        QTest::newRow("10 classes, smoothing 0.1") << 16 << 10 << 0.1f;
        QTest::newRow("1000 classes, smoothing 0.1") << 4 << 1000 << 0.1f;
    }
    void softmax_cross_entropy_matches_the_cpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(int, batch);
        QFETCH(int, classes);
        QFETCH(float, smoothing);
        make_backends();
        const Shape shape{batch, classes, 1, 1};
        std::vector<float> logits = random_values(shape.numel(), 19, 3.0f);
        std::vector<std::int32_t> labels(static_cast<std::size_t>(batch));
        std::mt19937 rng(20);
        for (auto& l : labels)
            l = std::int32_t(rng() % std::uint32_t(classes));
        // Sample 0: a tie for the largest logit, at its label and at an earlier class (the
        // first one wins, as std::max_element). Sample 1: its label the unique largest.
        logits[std::size_t(classes - 1)] = 10.0f;
        logits[std::size_t(classes - 3)] = 10.0f;
        labels[0] = classes - 1;
        logits[std::size_t(classes) + 2] = 10.0f;
        labels[1] = 2;
        Both bz(*cpu_, *gpu_, logits);
        auto ck = cpu_->softmax_cross_entropy(plain(shape), smoothing);
        auto gk = gpu_->softmax_cross_entropy(plain(shape), smoothing);
        ck->forward({plain(shape), bz.cpu.data()}, labels);
        gk->forward({plain(shape), bz.gpu.data()}, labels);
        // The result is asked for once backward is given, as a training step asks, and after
        // the caller's labels changed: the kernel compares its predictions with its own copy.
        const float grad_scale = 1.0f / float(batch);
        const Tensor gd = gk->backward(grad_scale);
        std::fill(labels.begin(), labels.end(), -1);
        const LossResult cl = ck->result();
        const LossResult gl = gk->result();
        QVERIFY(std::abs(gl.loss_sum - cl.loss_sum) <= kTolerance * std::abs(cl.loss_sum));
        QCOMPARE(gl.correct, cl.correct);
        QVERIFY(cl.correct >= 1);  // sample 1 at least: a count of 0 would prove little
        QCOMPARE(gd.shape(), shape);
        QVERIFY(relative_error(gpu_host(*gpu_, gd),
                               cpu_plain_values(*cpu_, ck->backward(grad_scale))) <= kTolerance);
    }

    void predictions_from_nan_logits_match_the_cpu() {
        // A diverged model's logits: the prediction is std::max_element's, which stays on a NaN
        // in the first place and passes over any later one.
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        const float nan = std::numeric_limits<float>::quiet_NaN();
        const Shape shape{3, 4, 1, 1};
        const std::vector<float> logits{nan, 1, 2, 0, 0, nan, 5, 1, nan, nan, nan, nan};
        const std::vector<std::int32_t> labels{0, 2, 0};
        Both bz(*cpu_, *gpu_, logits);
        auto ck = cpu_->softmax_cross_entropy(plain(shape), 0.0f);
        auto gk = gpu_->softmax_cross_entropy(plain(shape), 0.0f);
        ck->forward({plain(shape), bz.cpu.data()}, labels);
        gk->forward({plain(shape), bz.gpu.data()}, labels);
        const LossResult cl = ck->result();
        const LossResult gl = gk->result();
        QCOMPARE(cl.correct, 3);
        QCOMPARE(gl.correct, cl.correct);
        QVERIFY(std::isnan(gl.loss_sum));
    }

    void factories_reject_inputs_they_cannot_take() {
        SCALELAB_SKIP_WITHOUT_GPU();
        make_backends();
        const Shape shape{2, 3, 4, 5};
        const TensorDesc blocked{shape, std::make_shared<OtherLayout>(shape.numel() * 4)};
        Backend& g = *gpu_;
        const std::optional<ErrorKind> internal = ErrorKind::Internal;
        QCOMPARE(thrown_kind([&] { g.linear({.in_features = 60, .out_features = 2}, blocked); }),
                 internal);
        QCOMPARE(
            thrown_kind([&] { g.linear({.in_features = 59, .out_features = 2}, plain(shape)); }),
            internal);
        QCOMPARE(thrown_kind([&] { g.sync_batch_norm({.channels = 3}, blocked); }), internal);
        QCOMPARE(thrown_kind([&] { g.sync_batch_norm({.channels = 4}, plain(shape)); }), internal);
        QCOMPARE(thrown_kind([&] { g.dropout(blocked); }), internal);
        QCOMPARE(thrown_kind([&] { g.add(plain(shape), blocked); }), internal);
        QCOMPARE(thrown_kind([&] { g.add(plain(shape), plain(Shape{2, 3, 4, 4})); }), internal);
        QCOMPARE(thrown_kind([&] { g.to_plain(blocked); }), internal);
        QCOMPARE(thrown_kind([&] { g.softmax_cross_entropy(plain(shape), 0); }), internal);
        // The loss needs one label per sample, checked before any GPU work.
        auto loss = g.softmax_cross_entropy(plain(Shape{4, 3, 1, 1}), 0);
        DeviceBuffer z = g.allocate(12);
        const std::vector<std::int32_t> three{0, 1, 2};
        QCOMPARE(thrown_kind([&] {
                     loss->forward({plain(Shape{4, 3, 1, 1}), z.data()}, three);
                 }),
                 internal);
        // A result needs a forward of its own.
        QCOMPARE(thrown_kind([&] { loss->result(); }), internal);
        const std::vector<std::int32_t> four{0, 1, 2, 0};
        loss->forward({plain(Shape{4, 3, 1, 1}), z.data()}, four);
        QCOMPARE(loss->result().correct, 2);  // all logits 0: class 0 predicted
        QCOMPARE(thrown_kind([&] { loss->result(); }), internal);
    }
};

QTEST_APPLESS_MAIN(TestGpuOwnKernels)
#include "test_gpu_own_kernels.moc"
