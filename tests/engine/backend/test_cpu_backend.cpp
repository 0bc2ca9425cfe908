// The CPU backend's memory: a buffer that cannot be had is the user's OutOfMemory error, saying
// what to make smaller, not a crash (docs/errors.md, E-RUN-OUT-OF-MEMORY); its input stage holds
// what it was made for and refuses more.

#include <QtTest>

#include <cstddef>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "error.h"

using namespace scalelab;

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
};

QTEST_APPLESS_MAIN(TestCpuBackend)
#include "test_cpu_backend.moc"
