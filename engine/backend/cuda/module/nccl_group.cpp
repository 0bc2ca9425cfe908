#include "backend/cuda/module/nccl_group.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "backend/cuda/cuda_devices.h"
#include "backend/cuda/module/library_errors.h"
#include "backend/cuda/module/nccl_communicator.h"
#include "error.h"

namespace scalelab::cuda {

namespace {

[[noreturn]] void invalid(const std::string& message) {
    throw Error(ErrorKind::InvalidSpec, message);
}

}  // namespace

void check_nccl_group_options(const GpuGroupOptions& options) {
    const std::vector<int>& gpus = options.gpus;
    if (gpus.empty())
        invalid("a GPU group needs at least one GPU: list the GPUs to use, such as 0,1");
    for (std::size_t i = 0; i < gpus.size(); ++i) {
        if (gpus[i] < 0)
            invalid("GPU " + std::to_string(gpus[i]) +
                    " is not a GPU index: list indices from 0, such as 0,1");
        if (std::find(gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(i), gpus[i]) !=
            gpus.begin() + static_cast<std::ptrdiff_t>(i))
            invalid("GPU " + std::to_string(gpus[i]) +
                    " is listed twice: each GPU runs one rank of the group (NCCL has one rank "
                    "per GPU), so list each GPU once");
    }
    if (!options.unique_id.empty()) {
        if (options.unique_id.size() != sizeof(ncclUniqueId))
            invalid("a GPU group across processes needs an id of " +
                    std::to_string(sizeof(ncclUniqueId)) + " bytes from make_gpu_group_id (got " +
                    std::to_string(options.unique_id.size()) + ")");
        if (options.first_rank < 0 || options.ranks < options.first_rank + int(gpus.size()))
            invalid("this process's GPUs are ranks " + std::to_string(options.first_rank) + " to " +
                    std::to_string(options.first_rank + int(gpus.size()) - 1) +
                    ", outside a group of " + std::to_string(options.ranks) + " ranks");
    }
    if (!std::isfinite(options.timeout_seconds) || options.timeout_seconds <= 0) {
        std::ostringstream given;
        given << options.timeout_seconds;
        invalid("the GPU group's timeout must be a positive number of seconds (got " + given.str() +
                ")");
    }
    require_gpus(gpus);
}

std::shared_ptr<GpuGroup> make_nccl_group(const GpuGroupOptions& options) {
    return NcclGroup::create(options);
}

std::string make_nccl_group_id() {
    ncclUniqueId id;
    check_nccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
    return std::string(id.internal, sizeof id.internal);
}

}  // namespace scalelab::cuda
