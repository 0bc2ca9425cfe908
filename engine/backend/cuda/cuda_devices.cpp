#include "backend/cuda/cuda_devices.h"

#include <cstdlib>

#include "backend/cuda/cuda_error.h"

namespace scalelab::cuda {

namespace {

// "GPU 0" or "GPUs 0, 1, 3".
std::string gpus_text(const std::vector<int>& gpus) {
    std::string text = gpus.size() == 1 ? "GPU " : "GPUs ";
    for (std::size_t i = 0; i < gpus.size(); ++i)
        text += (i > 0 ? ", " : "") + std::to_string(gpus[i]);
    return text;
}

constexpr const char* cpu_fallback = "; runs use CPU devices";

std::string version_text(int version) {
    return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string cannot_use_gpus(const Error& error) {
    return std::string("the GPUs cannot be used: ") + error.what() + cpu_fallback;
}

GpuDescription describe_gpu(int index, int count) {
    cudaDeviceProp properties{};
    check_cuda(cudaGetDeviceProperties(&properties, index), "cudaGetDeviceProperties");
    GpuDescription gpu;
    gpu.index = index;
    gpu.name = properties.name;
    gpu.memory_bytes = properties.totalGlobalMem;
    gpu.compute_major = properties.major;
    gpu.compute_minor = properties.minor;
    for (int peer = 0; peer < count; ++peer) {
        if (peer == index)
            continue;
        int can_access = 0;
        check_cuda(cudaDeviceCanAccessPeer(&can_access, index, peer), "cudaDeviceCanAccessPeer");
        if (can_access != 0)
            gpu.peers.push_back(peer);
    }
    return gpu;
}

}  // namespace

CudaProbe probe_cuda() {
    CudaProbe probe;
    // Both fail only for a null pointer; without a driver, the driver's version is 0.
    cudaDriverGetVersion(&probe.driver_version);
    cudaRuntimeGetVersion(&probe.runtime_version);
    probe.device_count_status = cudaGetDeviceCount(&probe.device_count);
    if (probe.device_count_status != cudaSuccess)
        probe.device_count = 0;
    if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"))
        probe.visible_devices = visible;
    return probe;
}

std::string no_gpu_reason(const CudaProbe& probe) {
    if (probe.driver_version == 0)
        return std::string("no NVIDIA driver is installed") + cpu_fallback;
    if (probe.device_count_status == cudaSuccess && probe.device_count > 0)
        return {};
    // Checked only now: a driver of an older minor version may still run this runtime.
    if (probe.driver_version < probe.runtime_version)
        return "the NVIDIA driver supports CUDA " + version_text(probe.driver_version) +
               ", older than the CUDA " + version_text(probe.runtime_version) +
               " this build of ScaleLab uses: update the NVIDIA driver" + cpu_fallback;
    if (probe.device_count_status == cudaSuccess ||
        probe.device_count_status == cudaErrorNoDevice) {
        std::string reason = "no NVIDIA GPU was found";
        if (probe.visible_devices)
            reason += " (CUDA_VISIBLE_DEVICES is '" + *probe.visible_devices + "')";
        return reason + cpu_fallback;
    }
    return cannot_use_gpus(cuda_error(probe.device_count_status, "cudaGetDeviceCount"));
}

GpuDiscovery discover_gpus() {
    const CudaProbe probe = probe_cuda();
    GpuDiscovery found;
    found.no_gpu_reason = no_gpu_reason(probe);
    if (!found.no_gpu_reason.empty())
        return found;
    try {
        for (int index = 0; index < probe.device_count; ++index)
            found.gpus.push_back(describe_gpu(index, probe.device_count));
    } catch (const Error& error) {
        found.gpus.clear();
        found.no_gpu_reason = cannot_use_gpus(error);
        return found;
    }
    return keep_supported_gpus(std::move(found.gpus), lowest_supported_architecture());
}

int lowest_supported_architecture() {
    return SCALELAB_CUDA_LOWEST_ARCHITECTURE;
}

GpuDiscovery keep_supported_gpus(std::vector<GpuDescription> described, int lowest) {
    GpuDiscovery kept;
    std::string left_out;
    int left_out_count = 0;
    for (GpuDescription& gpu : described) {
        if (10 * gpu.compute_major + gpu.compute_minor >= lowest) {
            kept.gpus.push_back(std::move(gpu));
            continue;
        }
        ++left_out_count;
        left_out += std::string(left_out.empty() ? "" : ", ") + "GPU " + std::to_string(gpu.index) +
                    " (" + gpu.name + ", compute capability " + std::to_string(gpu.compute_major) +
                    "." + std::to_string(gpu.compute_minor) + ")";
    }
    if (kept.gpus.empty() && !left_out.empty())
        kept.no_gpu_reason = left_out + (left_out_count == 1 ? " is" : " are") +
                             " older than the compute capability " + std::to_string(lowest / 10) +
                             "." + std::to_string(lowest % 10) +
                             " this build of ScaleLab has GPU code for: rebuild with its "
                             "architecture in CMAKE_CUDA_ARCHITECTURES" +
                             cpu_fallback;
    return kept;
}

void require_gpus(const std::vector<int>& gpus) {
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        cudaGetLastError();  // the failed call's error is answered here, not by a later call
        throw Error(
            ErrorKind::InvalidSpec,
            gpus_text(gpus) + " asked for, but no GPU can be used: " + no_gpu_reason(probe_cuda()));
    }
    for (int gpu : gpus)
        if (gpu < 0 || gpu >= count)
            throw Error(ErrorKind::InvalidSpec,
                        "GPU " + std::to_string(gpu) + " asked for, but this machine has " +
                            (count == 1 ? std::string("1 GPU (0)")
                                        : std::to_string(count) + " GPUs (0 to " +
                                              std::to_string(count - 1) + ")") +
                            ": ask for one of those (scalelab-cli devices lists them)");
}

}  // namespace scalelab::cuda
