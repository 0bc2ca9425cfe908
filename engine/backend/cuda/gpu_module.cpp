#include "backend/cuda/gpu_module.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "error.h"

namespace scalelab::cuda {

namespace {

std::string module_path() {
    if (const char* path = std::getenv("SCALELAB_CUDA_MODULE"); path != nullptr && *path != '\0')
        return path;
    return SCALELAB_CUDA_MODULE_PATH;  // the build's own, set by engine/CMakeLists.txt
}

const GpuModule& load() {
    const std::string path = module_path();
    // Never closed: CUDA's libraries do not support being unloaded while the process runs.
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr)
        throw Error(ErrorKind::InvalidSpec,
                    "the GPU layers could not be loaded (" + std::string(dlerror()) +
                        "): rebuild ScaleLab, or set SCALELAB_CUDA_MODULE to its "
                        "libscalelab_cuda.so; CPU devices still work");
    using Entry = const GpuModule* (*)();
    const auto entry = reinterpret_cast<Entry>(dlsym(handle, "scalelab_cuda_module"));
    const GpuModule* module = entry != nullptr ? entry() : nullptr;
    if (module == nullptr || module->abi_version != GpuModule::current_abi)
        throw Error(ErrorKind::InvalidSpec,
                    path +
                        " is not the GPU module of this build of ScaleLab: rebuild ScaleLab, "
                        "or point SCALELAB_CUDA_MODULE at this build's libscalelab_cuda.so");
    return *module;
}

}  // namespace

const GpuModule& gpu_module() {
    // A failed load throws out of the initialisation, so the next call tries again.
    static const GpuModule& module = load();
    return module;
}

}  // namespace scalelab::cuda
