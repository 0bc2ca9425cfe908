// The GPU module (libscalelab_cuda.so) is loaded when a GPU is first asked for. What it throws
// must reach the engine as the engine's own errors (it is a separate shared object with its own
// copies of the engine's types), and a module that cannot be loaded must say what to do. Only
// the round trip through GPU memory needs a GPU.

#include <QtTest>

#include <cstdlib>
#include <functional>
#include <optional>

#include "backend/device_inventory.h"
#include "backend/gpu_runtime.h"
#include "error.h"
#include "gpu_test_support.h"

using namespace scalelab;

namespace {

std::optional<Error> thrown(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& error) {
        return error;
    }
    return std::nullopt;
}

}  // namespace

class TestGpuModule : public QObject {
    Q_OBJECT

  private slots:
    // First: once the module has loaded, the process keeps it.
    void a_module_that_cannot_be_loaded_says_what_to_do() {
#if SCALELAB_TEST_WITH_CUDA
        // The path the caller gave (scripts/gpu/check.sh gives the bundle's) is put back after,
        // for the tests below: the next call tries to load the module again.
        const QByteArray callers_module = qgetenv("SCALELAB_CUDA_MODULE");
        qputenv("SCALELAB_CUDA_MODULE", "/etc/passwd/dir/libscalelab_cuda.so");
        const auto error = thrown([] { make_gpu_backend({}); });
        if (callers_module.isEmpty())
            qunsetenv("SCALELAB_CUDA_MODULE");
        else
            qputenv("SCALELAB_CUDA_MODULE", callers_module);
        QVERIFY(error);
        QCOMPARE(error->kind(), ErrorKind::InvalidSpec);
        const QString message = error->what();
        QVERIFY2(message.contains("the GPU layers could not be loaded"), qPrintable(message));
        QVERIFY2(message.contains("/etc/passwd/dir/libscalelab_cuda.so"), qPrintable(message));
        QVERIFY2(message.contains("SCALELAB_CUDA_MODULE"), qPrintable(message));
        QVERIFY2(message.endsWith("CPU devices still work"), qPrintable(message));
#else
        const auto error = thrown([] { make_gpu_backend({}); });
        QVERIFY(error);
        QCOMPARE(error->kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error->what()).contains("has no CUDA backend"), error->what());
#endif
    }

    // The module's Error is caught as the engine's: without a GPU the reason is the machine's;
    // with GPUs, an index past the last one names those there are.
    void a_gpu_that_is_not_there_is_an_engine_error_from_the_module() {
#if !SCALELAB_TEST_WITH_CUDA
        QSKIP("this build has no CUDA backend, so no GPU module to load");
#else
        const DeviceInventory inventory = discover_devices();
        const int missing = int(inventory.gpus.size());
        const auto error = thrown([&] { make_gpu_backend({.gpu = missing}); });
        QVERIFY(error);
        QCOMPARE(error->kind(), ErrorKind::InvalidSpec);
        const QString message = error->what();
        QVERIFY2(message.startsWith(QString("GPU %1 asked for, but ").arg(missing)),
                 qPrintable(message));
        if (inventory.gpus.empty())
            QVERIFY2(message.endsWith(QString::fromStdString(inventory.no_gpu_reason)),
                     qPrintable(message));
        else
            QVERIFY2(message.contains(QString("this machine has %1 GPU").arg(missing)),
                     qPrintable(message));
        const auto negative = thrown([] { make_gpu_backend({.gpu = -1}); });
        QVERIFY(negative);
        QVERIFY2(QString(negative->what()).startsWith("GPU -1 asked for, but "), negative->what());
#endif
    }

    void gpu_memory_is_zeroed_and_round_trips() {
        SCALELAB_SKIP_WITHOUT_GPU();
        auto backend = make_gpu_backend({});
        QCOMPARE(QString::fromStdString(backend->name()), QString("cuda"));
        const DeviceBuffer zeros = backend->allocate(1000);
        QCOMPARE(zeros.size(), std::size_t(1000));
        for (float v : testing::to_host(*backend, zeros.data(), zeros.size()))
            QCOMPARE(v, 0.0f);
        const std::vector<float> values = testing::random_values(4096, 7);
        const DeviceBuffer buffer = testing::to_device(*backend, values);
        QCOMPARE(testing::to_host(*backend, buffer.data(), values.size()), values);
    }

    void a_buffer_larger_than_the_gpu_is_out_of_memory() {
        SCALELAB_SKIP_WITHOUT_GPU();
        auto backend = make_gpu_backend({});
        const std::size_t floats = std::size_t(1) << 40;  // 4 TiB
        const auto error = thrown([&] { backend->allocate(floats); });
        QVERIFY(error);
        QCOMPARE(error->kind(), ErrorKind::OutOfMemory);
        QVERIFY2(QString(error->what()).contains("use a smaller batch or model"), error->what());
    }
};

QTEST_APPLESS_MAIN(TestGpuModule)
#include "test_gpu_module.moc"
