#include "initial_state.h"

#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "npz_file.h"
#include "train/replica.h"

namespace scalelab {

QString write_initial_state(const RunSpec& spec, Shape image, const QString& path) {
    cpu::CpuBackend backend(1);
    const nn::Model model = build_run_model(spec, image, backend);
    std::vector<float> params(model.params().size()), state(model.state().size());
    backend.download(model.params().data(), params);
    backend.download(model.state().data(), state);
    std::vector<NpzArray> arrays;
    for (const nn::NamedTensor& tensor : model.named_tensors()) {
        const std::vector<float>& values = tensor.is_state ? state : params;
        arrays.push_back({tensor.name, tensor.shape,
                          std::span<const float>(values).subspan(tensor.offset, tensor.size)});
    }
    return write_npz_file(path, arrays);
}

}  // namespace scalelab
