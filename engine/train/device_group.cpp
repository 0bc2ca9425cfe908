#include "train/device_group.h"

#include <utility>

#include "backend/cpu/cpu_backend.h"
#include "comm/hierarchical_comm.h"

namespace scalelab {

namespace {

bool across_processes(const std::shared_ptr<comm::ProcessGroup>& processes) {
    return processes != nullptr && processes->count() > 1;
}

}  // namespace

DeviceGroup::DeviceGroup(int devices, std::vector<int> gpus, GpuBackendOptions gpu_options,
                         double timeout_seconds, int threads, bool sync_bn, bool spin,
                         std::shared_ptr<comm::ProcessGroup> processes)
    : threads_(threads),
      gpus_(std::move(gpus)),
      gpu_options_(gpu_options),
      host_(comm::ThreadGroup::create(devices, spin)),
      sync_bn_(sync_bn && (devices > 1 || across_processes(processes))
                   ? comm::ThreadGroup::create(devices, spin)
                   : nullptr) {
    GpuGroupOptions gpu_group{.gpus = gpus_, .timeout_seconds = timeout_seconds};
    if (across_processes(processes)) {
        host_processes_ = processes->duplicate();
        if (sync_bn_)
            sync_bn_processes_ = processes->duplicate();
        if (!gpus_.empty()) {
            gpu_group.unique_id = comm::made_by_process_0(*processes, make_gpu_group_id);
            gpu_group.first_rank = processes->index() * devices;
            gpu_group.ranks = processes->count() * devices;
        }
    }
    if (!gpus_.empty())
        gpu_ = make_gpu_group(gpu_group);
}

DeviceGroup::Rank DeviceGroup::rank(int rank) {
    Rank r;
    const auto joined = [](std::unique_ptr<comm::ThreadComm> local,
                           const std::shared_ptr<comm::ProcessGroup>& processes)
        -> std::unique_ptr<comm::Communicator> {
        if (!processes)
            return local;
        return std::make_unique<comm::HierarchicalComm>(std::move(local), processes);
    };
    r.host = joined(host_->communicator(rank), host_processes_);
    if (sync_bn_)
        r.sync_bn = joined(sync_bn_->communicator(rank), sync_bn_processes_);
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
    // A rank waiting across processes wakes now, not at the collective timeout.
    for (const auto& processes : {host_processes_, sync_bn_processes_})
        if (processes)
            processes->abort(reason);
}

}  // namespace scalelab
