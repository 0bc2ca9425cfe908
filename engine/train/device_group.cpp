#include "train/device_group.h"

#include <utility>

#include "backend/cpu/cpu_backend.h"

namespace scalelab {

DeviceGroup::DeviceGroup(int devices, std::vector<int> gpus, GpuBackendOptions gpu_options,
                         double timeout_seconds, int threads, bool sync_bn, bool spin)
    : threads_(threads),
      gpus_(std::move(gpus)),
      gpu_options_(gpu_options),
      host_(comm::ThreadGroup::create(devices, spin)),
      sync_bn_(sync_bn && devices > 1 ? comm::ThreadGroup::create(devices, spin) : nullptr),
      gpu_(gpus_.empty() ? nullptr
                         : make_gpu_group({.gpus = gpus_, .timeout_seconds = timeout_seconds})) {}

DeviceGroup::Rank DeviceGroup::rank(int rank) {
    Rank r;
    r.host = host_->communicator(rank);
    if (sync_bn_)
        r.sync_bn = sync_bn_->communicator(rank);
    if (gpu_) {
        r.gpu = gpu_->communicator(rank);
        GpuBackendOptions options = gpu_options_;
        options.gpu = gpus_[std::size_t(rank)];
        r.backend = make_gpu_backend(options);
    } else {
        r.backend = std::make_unique<cpu::CpuBackend>(threads_);
    }
    return r;
}

void DeviceGroup::abort(const std::string& reason) {
    host_->abort(reason);
    if (sync_bn_)
        sync_bn_->abort(reason);
    if (gpu_)
        gpu_->abort(reason);
}

}  // namespace scalelab
