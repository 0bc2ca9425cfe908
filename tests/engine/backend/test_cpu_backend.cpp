// The CPU backend's memory: a buffer that cannot be had is the user's OutOfMemory error, saying
// what to make smaller, not a crash (docs/errors.md, E-RUN-OUT-OF-MEMORY); its input stage holds
// what it was made for and refuses more. Its dropout draws each activation's mask by the
// activation's logical index in a blocked layout too, as the GPU does on its plain tensors. And
// the GPU tests' reference, a CPU tensor read in plain order, reads a blocked one right.

#include <QtTest>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/dnnl_util.h"
#include "backend/dropout_mask.h"
#include "error.h"
#include "gpu_test_support.h"

using namespace scalelab;

namespace {

// nChw8c with 12 channels: blocks of 8 channels, the second one half padding. Element
// (n, c, h, w) sits at ((n * 2 + c / 8) * h_w + h * w_size + w) * 8 + c % 8.
struct BlockedTensor {
    Shape shape{2, 12, 3, 5};
    int blocks = 2;
    int hw = shape.h * shape.w;
    TensorDesc desc =
        cpu::desc_of(shape, dnnl::memory::desc(cpu::dims_of(shape), dnnl::memory::data_type::f32,
                                               dnnl::memory::format_tag::nChw8c));

    // Where the value of (n, c, spatial index i) is.
    std::size_t at(int n, int c, int i) const {
        return ((std::size_t(n) * blocks + std::size_t(c / 8)) * hw + std::size_t(i)) * 8 +
               std::size_t(c % 8);
    }
};

}  // namespace

class TestCpuBackend : public QObject {
    Q_OBJECT

  private slots:
    void an_allocation_that_does_not_fit_is_out_of_memory() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
        QSKIP("the sanitizers' allocators abort on an impossible size instead of failing it");
#endif
        cpu::CpuBackend backend(1);
        QCOMPARE(backend.allocate(1000).size(), std::size_t(1000));
        try {
            backend.allocate(std::size_t(1) << 60);  // 2^62 bytes: more than any address space
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::OutOfMemory);
            QCOMPARE(QString::fromStdString(e.what()),
                     QString("could not allocate 4398046511104 MiB: use a smaller batch or model"));
        }
    }

    void the_input_stage_holds_a_batch_and_refuses_a_larger_one() {
        cpu::CpuBackend backend(1);
        const auto stage = backend.input_stage(4);
        const std::vector<float> batch{1, 2, 3};
        const float* staged = stage->stage(batch);
        QCOMPARE(std::vector<float>(staged, staged + 3), batch);
        try {
            stage->stage(std::vector<float>(5, 0.0f));
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Internal);
            QCOMPARE(QString::fromStdString(e.what()),
                     QString("a batch of 5 floats was staged for a replica whose input holds 4"));
        }
    }

    void dropout_draws_by_logical_index_in_a_blocked_layout() {
        const BlockedTensor layout;
        const Shape shape = layout.shape;
        const int blocks = layout.blocks, hw = layout.hw;
        const TensorDesc& blocked = layout.desc;
        QVERIFY(!blocked.plain());
        QCOMPARE(blocked.bytes(), std::size_t(shape.n) * blocks * 8 * hw * sizeof(float));

        cpu::CpuBackend backend(1);
        const DeviceBuffer x = backend.allocate(blocked.bytes() / sizeof(float));
        const DeviceBuffer dy = backend.allocate(blocked.bytes() / sizeof(float));
        for (int n = 0; n < shape.n; ++n)
            for (int c = 0; c < shape.c; ++c)
                for (int i = 0; i < hw; ++i) {
                    x.data()[layout.at(n, c, i)] = float(1 + c + i);
                    dy.data()[layout.at(n, c, i)] = float(2 + n + c);
                }
        const float p = 0.4f, scale = 1.0f / (1.0f - p);
        const std::uint64_t seed = 77;
        const auto kernel = backend.dropout(blocked);
        const Tensor y = kernel->forward(Tensor{blocked, x.data()}, p, seed);
        const Tensor dx = kernel->backward(Tensor{blocked, dy.data()});
        int kept = 0;
        for (int n = 0; n < shape.n; ++n)
            for (int c = 0; c < shape.c; ++c)
                for (int i = 0; i < hw; ++i) {
                    const std::uint64_t logical = (std::uint64_t(n) * shape.c + c) * hw + i;
                    const float m = dropout_keeps(seed, logical, p) ? scale : 0.0f;
                    kept += m > 0;
                    QCOMPARE(y.data[layout.at(n, c, i)], float(1 + c + i) * m);
                    QCOMPARE(dx.data[layout.at(n, c, i)], float(2 + n + c) * m);
                }
        for (int n = 0; n < shape.n; ++n)  // the padding channels 12..15 stay zero
            for (int c = shape.c; c < blocks * 8; ++c)
                for (int i = 0; i < hw; ++i)
                    QCOMPARE(y.data[layout.at(n, c, i)], 0.0f);
        QVERIFY(kept > 0 && kept < int(shape.numel()));  // a mask, not all or nothing
    }

    void a_blocked_tensor_reads_in_plain_order() {
        // The GPU tests compare with the CPU backend through testing::cpu_plain_values, which
        // must keep the reorder's output alive while it reads it.
        const BlockedTensor layout;
        cpu::CpuBackend backend(1);
        const DeviceBuffer x = backend.allocate(layout.desc.bytes() / sizeof(float));
        const Shape shape = layout.shape;
        for (int n = 0; n < shape.n; ++n)
            for (int c = 0; c < shape.c; ++c)
                for (int i = 0; i < layout.hw; ++i)
                    x.data()[layout.at(n, c, i)] = float(1000 * n + 10 * c + i);
        const std::vector<float> plain =
            testing::cpu_plain_values(backend, Tensor{layout.desc, x.data()});
        QCOMPARE(plain.size(), shape.numel());
        for (int n = 0; n < shape.n; ++n)
            for (int c = 0; c < shape.c; ++c)
                for (int i = 0; i < layout.hw; ++i)
                    QCOMPARE(plain[(std::size_t(n) * shape.c + std::size_t(c)) * layout.hw +
                                   std::size_t(i)],
                             float(1000 * n + 10 * c + i));
    }
};

QTEST_APPLESS_MAIN(TestCpuBackend)
#include "test_cpu_backend.moc"
