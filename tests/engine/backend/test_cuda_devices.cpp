// GPU discovery and the CUDA runtime's errors. Without a usable GPU (no driver, no GPU, or a
// build without the CUDA backend) discovery finds none and says why; with GPUs, each is fully
// described. Turning a CUDA status, or a GPU library's last warning, into an engine error needs
// no GPU.

#include <QtTest>

#include <algorithm>
#include <functional>
#include <optional>

#include "backend/device_inventory.h"
#include "error.h"
#if SCALELAB_TEST_WITH_CUDA
#include "backend/cuda/cuda_devices.h"
#include "backend/cuda/cuda_error.h"
#endif

using namespace scalelab;

namespace {

constexpr const char* cpu_fallback = "; runs use CPU devices";

#if SCALELAB_TEST_WITH_CUDA
// The error `check` throws; nothing when it throws none.
std::optional<Error> thrown(const std::function<void()>& check) {
    try {
        check();
    } catch (const Error& error) {
        return error;
    }
    return std::nullopt;
}
#else
constexpr const char* no_backend =
    "this build has no CUDA backend (SCALELAB_CUDA=OFF, or CUDA 12+, cuDNN 9 or NCCL 2 not "
    "found)";
#endif

}  // namespace

class TestCudaDevices : public QObject {
    Q_OBJECT

  private slots:
    void without_a_usable_gpu_the_reason_names_the_cause() {
        const DeviceInventory inventory = discover_devices();
        if (!inventory.gpus.empty())
            QSKIP("this machine has a GPU that can be used");
        const QString reason = QString::fromStdString(inventory.no_gpu_reason);
        QVERIFY2(reason.endsWith(cpu_fallback), qPrintable(reason));
#if SCALELAB_TEST_WITH_CUDA
        // The reason is the one the CUDA runtime's own answers give, not the CPU-only build's.
        const cuda::CudaProbe probe = cuda::probe_cuda();
        QCOMPARE(probe.runtime_version / 1000, CUDART_VERSION / 1000);
        QCOMPARE(reason, QString::fromStdString(cuda::no_gpu_reason(probe)));
        QVERIFY2(!reason.contains("no CUDA backend"), qPrintable(reason));
#else
        QCOMPARE(reason, QString("this build of ScaleLab has no CUDA backend") + cpu_fallback);
#endif
    }

    void every_gpu_is_described() {
#if SCALELAB_TEST_WITH_CUDA
        const DeviceInventory inventory = discover_devices();
        if (inventory.gpus.empty())
            QSKIP(qPrintable("no GPU to describe: " +
                             QString::fromStdString(inventory.no_gpu_reason)));
        QVERIFY(inventory.no_gpu_reason.empty());
        const int count = int(inventory.gpus.size());
        for (int i = 0; i < count; ++i) {
            const GpuDescription& gpu = inventory.gpus[std::size_t(i)];
            QVERIFY(gpu.index >= i);  // indices are CUDA's: unsupported GPUs leave gaps
            QVERIFY(!gpu.name.empty());
            QVERIFY(gpu.memory_bytes > 0);
            QVERIFY2(
                gpu.compute_major * 10 + gpu.compute_minor >= cuda::lowest_supported_architecture(),
                qPrintable(QString("%1.%2").arg(gpu.compute_major).arg(gpu.compute_minor)));
            for (std::size_t p = 0; p < gpu.peers.size(); ++p) {
                const int peer = gpu.peers[p];
                QVERIFY(peer >= 0 && peer != gpu.index);
                QVERIFY(std::count(gpu.peers.begin(), gpu.peers.end(), peer) == 1);
            }
        }
#else
        QSKIP(no_backend);
#endif
    }

    // The build has code for compute capability 8.0 and newer (CMAKE_CUDA_ARCHITECTURES 80, 90):
    // older GPUs are left out, and when no GPU is left, the reason names them.
    void gpus_older_than_the_build_are_left_out() {
#if SCALELAB_TEST_WITH_CUDA
        QCOMPARE(cuda::lowest_supported_architecture(), 80);
        const auto gpu = [](int index, const char* name, int major, int minor) {
            GpuDescription d;
            d.index = index;
            d.name = name;
            d.compute_major = major;
            d.compute_minor = minor;
            return d;
        };
        cuda::GpuDiscovery mixed = cuda::keep_supported_gpus(
            {gpu(0, "V100", 7, 0), gpu(1, "A100", 8, 0), gpu(2, "RTX 3090", 8, 6)}, 80);
        QCOMPARE(mixed.gpus.size(), std::size_t(2));
        QCOMPARE(mixed.gpus[0].index, 1);
        QCOMPARE(mixed.gpus[1].index, 2);
        QVERIFY(mixed.no_gpu_reason.empty());
        const cuda::GpuDiscovery old =
            cuda::keep_supported_gpus({gpu(0, "V100", 7, 0), gpu(1, "T4", 7, 5)}, 80);
        QVERIFY(old.gpus.empty());
        QCOMPARE(QString::fromStdString(old.no_gpu_reason),
                 QString("GPU 0 (V100, compute capability 7.0), GPU 1 (T4, compute capability "
                         "7.5) are older than the compute capability 8.0 this build of ScaleLab "
                         "has GPU code for: rebuild with its architecture in "
                         "CMAKE_CUDA_ARCHITECTURES; runs use CPU devices"));
#else
        QSKIP(no_backend);
#endif
    }

    void the_reason_follows_what_cuda_reports_data() {
        QTest::addColumn<int>("driver");
        QTest::addColumn<int>("runtime");
        QTest::addColumn<int>("status");
        QTest::addColumn<int>("count");
        QTest::addColumn<QString>("visible");    // CUDA_VISIBLE_DEVICES; null: not set
        QTest::addColumn<QStringList>("words");  // empty: GPUs can be used
#if SCALELAB_TEST_WITH_CUDA
        QTest::newRow("no driver") << 0 << 13000 << int(cudaErrorInsufficientDriver) << 0
                                   << QString() << QStringList{"no NVIDIA driver is installed"};
        QTest::newRow("driver too old")
            << 12040 << 13000 << int(cudaErrorInsufficientDriver) << 0 << QString()
            << QStringList{"CUDA 12.4", "CUDA 13.0", "update the NVIDIA driver"};
        QTest::newRow("older minor driver that works")
            << 13000 << 13010 << int(cudaSuccess) << 2 << QString() << QStringList{};
        QTest::newRow("GPUs") << 13000 << 13000 << int(cudaSuccess) << 1 << QString()
                              << QStringList{};
        QTest::newRow("no GPU") << 13000 << 13000 << int(cudaErrorNoDevice) << 0 << QString()
                                << QStringList{"no NVIDIA GPU was found"};
        QTest::newRow("no GPU counted") << 13000 << 13000 << int(cudaSuccess) << 0 << QString()
                                        << QStringList{"no NVIDIA GPU was found"};
        QTest::newRow("GPUs hidden")
            << 13000 << 13000 << int(cudaErrorNoDevice) << 0 << QString("")
            << QStringList{"no NVIDIA GPU was found (CUDA_VISIBLE_DEVICES is '')"};
        QTest::newRow("other error")
            << 13000 << 13000 << int(cudaErrorInitializationError) << 0 << QString()
            << QStringList{"cudaGetDeviceCount failed",
                           cudaGetErrorString(cudaErrorInitializationError),
                           "cudaErrorInitializationError"};
#endif
    }

    void the_reason_follows_what_cuda_reports() {
#if SCALELAB_TEST_WITH_CUDA
        QFETCH(int, driver);
        QFETCH(int, runtime);
        QFETCH(int, status);
        QFETCH(int, count);
        QFETCH(QString, visible);
        QFETCH(QStringList, words);
        cuda::CudaProbe probe;
        probe.driver_version = driver;
        probe.runtime_version = runtime;
        probe.device_count_status = cudaError_t(status);
        probe.device_count = count;
        if (!visible.isNull())
            probe.visible_devices = visible.toStdString();
        const QString reason = QString::fromStdString(cuda::no_gpu_reason(probe));
        if (words.isEmpty()) {
            QVERIFY2(reason.isEmpty(), qPrintable(reason));
            return;
        }
        QVERIFY2(reason.endsWith(cpu_fallback), qPrintable(reason));
        for (const QString& word : words)
            QVERIFY2(reason.contains(word), qPrintable(reason + " lacks " + word));
#else
        QSKIP(no_backend);
#endif
    }

    void a_cuda_error_names_the_call_and_cudas_message() {
#if SCALELAB_TEST_WITH_CUDA
        const auto oom = thrown([] { cuda::check_cuda(cudaErrorMemoryAllocation, "cudaMalloc"); });
        QVERIFY(oom);
        QCOMPARE(oom->kind(), ErrorKind::OutOfMemory);
        QCOMPARE(QString(oom->what()),
                 QString("cudaMalloc failed: out of memory (cudaErrorMemoryAllocation): use a "
                         "smaller batch or model"));
        const auto invalid =
            thrown([] { cuda::check_cuda(cudaErrorInvalidValue, "cudaMemcpyAsync"); });
        QVERIFY(invalid);
        QCOMPARE(invalid->kind(), ErrorKind::Internal);
        QCOMPARE(QString(invalid->what()),
                 QString("cudaMemcpyAsync failed: %1 (cudaErrorInvalidValue)")
                     .arg(cudaGetErrorString(cudaErrorInvalidValue)));
        QVERIFY(!thrown([] { cuda::check_cuda(cudaSuccess, "cudaFree"); }));
#else
        QSKIP(no_backend);
#endif
    }

    // NCCL returns every CUDA failure inside it as ncclUnhandledCudaError; its last warning,
    // in the words of NCCL 2.28's checks.h and cudawrap.h, tells a full GPU from the others.
    void a_gpu_library_that_ran_out_of_memory_is_told_by_its_last_warning() {
#if SCALELAB_TEST_WITH_CUDA
        QVERIFY(cuda::says_gpu_memory_ran_out("Cuda failure 'out of memory'"));
        QVERIFY(cuda::says_gpu_memory_ran_out("Cuda failure 2 'out of memory'"));
        QVERIFY(!cuda::says_gpu_memory_ran_out("Cuda failure 'invalid argument'"));
        QVERIFY(!cuda::says_gpu_memory_ran_out("Call to posix_fallocate failed: No space left"));
        QVERIFY(!cuda::says_gpu_memory_ran_out(""));
#else
        QSKIP(no_backend);
#endif
    }
};

QTEST_APPLESS_MAIN(TestCudaDevices)
#include "test_cuda_devices.moc"
