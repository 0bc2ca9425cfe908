#pragma once

// What the GPU tests share: whether a GPU can be used (they skip with the reason where none
// can), random inputs, and copies between the host and a backend.

#include <QtTest>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <vector>

#include "backend/backend.h"
#include "backend/device_inventory.h"

namespace scalelab::testing {

// Why no GPU test can run here ("" when one can): the machine's reason, as users see it.
inline QString gpu_unavailable_reason() {
    const DeviceInventory inventory = discover_devices();
    if (!inventory.gpus.empty())
        return {};
    return "needs a GPU: " + QString::fromStdString(inventory.no_gpu_reason);
}

// Skips the calling test function where no GPU can be used.
#define SCALELAB_SKIP_WITHOUT_GPU()                                                      \
    do {                                                                                 \
        const QString scalelab_gpu_reason = scalelab::testing::gpu_unavailable_reason(); \
        if (!scalelab_gpu_reason.isEmpty())                                              \
            QSKIP(qPrintable(scalelab_gpu_reason));                                      \
    } while (false)

// Skips the calling test function in a build without the CUDA backend, where the GPU module's
// own checks cannot be reached (every GPU call says that the build has none instead, which
// test_gpu_module checks). CMake defines SCALELAB_TEST_WITH_CUDA for the GPU tests of a CUDA build.
#if SCALELAB_TEST_WITH_CUDA
#define SCALELAB_SKIP_WITHOUT_CUDA_BACKEND() \
    do {                                     \
    } while (false)
#else
#define SCALELAB_SKIP_WITHOUT_CUDA_BACKEND() \
    QSKIP("this build has no CUDA backend: its GPU module's checks cannot be reached")
#endif

// n values uniform in [-scale, scale), the same for the same seed.
inline std::vector<float> random_values(std::size_t n, std::uint32_t seed, float scale = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> uniform(-scale, scale);
    std::vector<float> v(n);
    for (float& x : v)
        x = uniform(rng);
    return v;
}

// A backend buffer holding `host`.
inline DeviceBuffer to_device(Backend& backend, std::span<const float> host) {
    DeviceBuffer buffer = backend.allocate(host.size());
    backend.upload(host, buffer.data());
    return buffer;
}

// `floats` values from backend memory.
inline std::vector<float> to_host(Backend& backend, const float* device, std::size_t floats) {
    std::vector<float> host(floats);
    backend.download(device, host);
    return host;
}

// A CPU backend tensor's values in plain NCHW order, whatever its layout (the CPU backend may
// hand back a blocked one, e.g. a convolution's output). The reorder kernel owns the plain copy,
// so it is kept until the copy has been read.
inline std::vector<float> cpu_plain_values(Backend& cpu, const Tensor& t) {
    if (t.desc.plain())
        return to_host(cpu, t.data, t.shape().numel());
    const std::unique_ptr<ReorderKernel> reorder = cpu.to_plain(t.desc);
    const Tensor plain = reorder->forward(t);
    return to_host(cpu, plain.data, plain.shape().numel());
}

// max_i |actual_i - expected_i| / max_i |expected_i| (0 when both are all zero): the error
// relative to the size of the result, which is what float rounding in a different summation
// order produces.
inline double relative_error(std::span<const float> actual, std::span<const float> expected) {
    if (actual.size() != expected.size())
        return INFINITY;
    double diff = 0, scale = 0;
    for (std::size_t i = 0; i < actual.size(); ++i) {
        diff = std::max(diff, std::abs(double(actual[i]) - expected[i]));
        scale = std::max(scale, std::abs(double(expected[i])));
    }
    if (scale == 0)
        return diff;
    return diff / scale;
}

}  // namespace scalelab::testing
