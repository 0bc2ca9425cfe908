#include "data/load.h"

#include "data/cifar10_reader.h"
#include "data/idx_reader.h"
#include "error.h"

namespace scalelab::data {

std::string default_data_dir(std::string_view name) {
    if (name == "fashion-mnist") {
        return "/usr/share/datasets/fashion-mnist";
    }
    return "";
}

TrainTest load_dataset(const DatasetRequest& request) {
    const std::string& name = request.name;
    const std::string dir = request.dir.empty() ? default_data_dir(name) : request.dir;
    if (name == "synthetic") {
        return make_synthetic(request.synthetic);
    }
    if (name == "fashion-mnist") {
        return load_idx_folder(dir, name);
    }
    if (name == "mnist") {
        if (dir.empty()) {
            throw Error(ErrorKind::DatasetMissing,
                        "mnist has no default folder: pass --data DIR, where DIR holds the four "
                        "MNIST IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                        "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each may be .gz)");
        }
        return load_idx_folder(dir, name);
    }
    if (name == "cifar10") {
        if (dir.empty()) {
            throw Error(ErrorKind::DatasetMissing,
                        "cifar10 has no default folder: pass --data DIR, where DIR holds the "
                        "CIFAR-10 binary version's data_batch_1.bin .. data_batch_5.bin and "
                        "test_batch.bin");
        }
        return load_cifar10(dir);
    }
    throw Error(ErrorKind::InvalidSpec, "unknown dataset '" + name +
                                            "'; choose one of fashion-mnist, mnist, cifar10, "
                                            "synthetic");
}

}  // namespace scalelab::data
