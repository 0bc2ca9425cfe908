// A training step allocates no large block once its kernels exist (DESIGN.md: a device's buffers
// are kept for the whole run, never allocated per step). glibc maps every block of 128 KiB or
// more afresh (app/allocator_policy.h) and faults its pages in as they are first touched, so one
// such block a step costs more than a small layer: oneDNN 2.6's inner product malloc'd its
// packing buffers on every call from a batch of 16 on, and the mlp trained three times slower at
// batch 16 than at 15. Whether such a block is then mapped or served from the heap depends on
// the heap's state, so this test does not watch the mappings: it counts the allocations
// themselves, by standing in for the C library's allocation functions, while a replica of each
// model of the zoo trains a few steps (forward, loss, backward, optimiser).

#include <QtTest>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <memory>
#include <string>

#include "backend/cpu/cpu_backend.h"
#include "data/batch_loader.h"
#include "sanitizers.h"
#include "train/replica.h"

namespace {

// The size from which glibc maps a block afresh under the allocator policy.
constexpr std::size_t kLargeBlock = 128 * 1024;

std::atomic<bool> counting{false};
std::atomic<int> large_allocations{0};
std::atomic<std::size_t> largest_allocation{0};

}  // namespace

#if !SCALELAB_ADDRESS_OR_THREAD_SANITIZER
namespace {

void note_allocation(std::size_t bytes) {
    if (bytes < kLargeBlock || !counting.load(std::memory_order_relaxed))
        return;
    large_allocations.fetch_add(1, std::memory_order_relaxed);
    std::size_t largest = largest_allocation.load(std::memory_order_relaxed);
    while (bytes > largest && !largest_allocation.compare_exchange_weak(largest, bytes)) {
    }
}

}  // namespace

// Every allocation of the process, oneDNN's and libstdc++'s operator new included, comes here
// first (a program's own definitions take precedence over the C library's), is noted, and is
// served by glibc's allocator as it would have been.
extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);

void* malloc(std::size_t bytes) {
    note_allocation(bytes);
    return __libc_malloc(bytes);
}
void* calloc(std::size_t count, std::size_t bytes) {
    note_allocation(count * bytes);
    return __libc_calloc(count, bytes);
}
void* realloc(void* block, std::size_t bytes) {
    note_allocation(bytes);
    return __libc_realloc(block, bytes);
}
void* aligned_alloc(std::size_t alignment, std::size_t bytes) {
    note_allocation(bytes);
    return __libc_memalign(alignment, bytes);
}
void* memalign(std::size_t alignment, std::size_t bytes) {
    note_allocation(bytes);
    return __libc_memalign(alignment, bytes);
}
int posix_memalign(void** block, std::size_t alignment, std::size_t bytes) {
    if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0)
        return EINVAL;
    note_allocation(bytes);
    void* p = __libc_memalign(alignment, bytes);
    if (p == nullptr)
        return ENOMEM;
    *block = p;
    return 0;
}
}
#endif

Q_DECLARE_METATYPE(scalelab::OptimizerKind)

using namespace scalelab;

namespace {

data::Batch batch_of(int size, const Shape& image) {
    data::Batch batch;
    batch.size = size;
    batch.images.assign(std::size_t(size) * image.per_sample(), 0.5f);
    batch.labels.assign(std::size_t(size), 3);
    return batch;
}

void train_steps(Replica& replica, const data::Batch& batch, int steps) {
    for (int step = 0; step < steps; ++step) {
        replica.forward(batch, step);
        replica.result();
        replica.backward(1.0f / float(batch.size));
        replica.update(0.01);
    }
}

}  // namespace

class TestStepAllocations : public QObject {
    Q_OBJECT

  private slots:
    void a_step_allocates_no_large_block_data() {
        QTest::addColumn<QString>("model");
        QTest::addColumn<int>("batch");
        QTest::addColumn<OptimizerKind>("optimizer");
        for (const char* model : {"mlp", "cnn", "resnet8", "resnet20", "wrn"})
            for (int batch : {15, 16, 64})
                QTest::addRow("%s, batch %d", model, batch)
                    << QString(model) << batch << OptimizerKind::Sgd;
        for (OptimizerKind optimizer : {OptimizerKind::Lars, OptimizerKind::Lamb,
                                        OptimizerKind::NovoGrad, OptimizerKind::AdamW})
            QTest::addRow("mlp, batch 16, %s", std::string(to_string(optimizer)).c_str())
                << QString("mlp") << 16 << optimizer;
    }
    void a_step_allocates_no_large_block() {
        if (testing::sanitizer_allocator)
            QSKIP(
                "the sanitizers' allocators replace the C library's functions this test "
                "stands in for; it runs in the release suite");
        QFETCH(QString, model);
        QFETCH(int, batch);
        QFETCH(OptimizerKind, optimizer);
        RunSpec spec;
        spec.model = model.toStdString();
        spec.width = 1;
        spec.batch = batch;
        spec.optimizer = optimizer;
        const Shape image{1, 1, 28, 28};
        Replica replica(spec, image, std::make_unique<cpu::CpuBackend>(1));
        const data::Batch data = batch_of(batch, image);
        train_steps(replica, data, 2);  // makes every kernel and the optimiser's state

        large_allocations = 0;
        largest_allocation = 0;
        counting = true;
        train_steps(replica, data, 3);
        counting = false;
        QVERIFY2(
            large_allocations == 0,
            qPrintable(QString("3 steps allocated %1 blocks of %2 KiB or more, the largest %3 KiB")
                           .arg(large_allocations.load())
                           .arg(kLargeBlock / 1024)
                           .arg(largest_allocation.load() / 1024)));
    }
};

QTEST_APPLESS_MAIN(TestStepAllocations)
#include "test_step_allocations.moc"
