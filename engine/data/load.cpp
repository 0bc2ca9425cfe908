#include "data/load.h"

#include "data/cifar10_reader.h"
#include "data/idx_reader.h"
#include "error.h"

namespace scalelab::data {

namespace {

enum class Format { Synthetic, Idx, Cifar10 };

// Throws InvalidSpec for a name no reader knows.
Format format_of(const std::string& name) {
    if (name == "synthetic") {
        return Format::Synthetic;
    }
    if (name == "fashion-mnist" || name == "mnist") {
        return Format::Idx;
    }
    if (name == "cifar10") {
        return Format::Cifar10;
    }
    throw Error(ErrorKind::InvalidSpec, "unknown dataset '" + name +
                                            "'; choose one of fashion-mnist, mnist, cifar10, "
                                            "synthetic");
}

// The folder a file-based dataset is read from: the request's, else the name's default.
// Throws DatasetMissing for mnist and cifar10 when there is neither.
std::string folder_of(const DatasetRequest& request) {
    const std::string& name = request.name;
    const std::string dir = request.dir.empty() ? default_data_dir(name) : request.dir;
    if (!dir.empty()) {
        return dir;
    }
    if (name == "mnist") {
        throw Error(ErrorKind::DatasetMissing,
                    "mnist has no default folder: name one (--data DIR on the command line, "
                    "Folder in the window) that holds the four "
                    "MNIST IDX files train-images-idx3-ubyte, train-labels-idx1-ubyte, "
                    "t10k-images-idx3-ubyte and t10k-labels-idx1-ubyte (each may be .gz)");
    }
    if (name == "cifar10") {
        throw Error(ErrorKind::DatasetMissing,
                    "cifar10 has no default folder: name one (--data DIR on the command line, "
                    "Folder in the window) that holds the "
                    "CIFAR-10 binary version's data_batch_1.bin .. data_batch_5.bin and "
                    "test_batch.bin");
    }
    // Without a default the reader itself says that no folder was given.
    return dir;
}

// The first `subset` images of `set` (all of them for 0); throws when the set has fewer.
void keep_first(Dataset& set, std::size_t subset, const char* field) {
    if (subset == 0)
        return;
    if (subset > set.count())
        throw Error(ErrorKind::InvalidSpec, std::string(field) + " is " + std::to_string(subset) +
                                                " but the set has only " +
                                                std::to_string(set.count()) +
                                                " images: lower it, or 0 for the whole set");
    set.labels.resize(subset);
    set.images.resize(subset * set.image_size());
}

TrainTest load_whole(const DatasetRequest& request) {
    const Format format = format_of(request.name);
    if (format == Format::Synthetic) {
        return make_synthetic(request.synthetic);
    }
    const std::string dir = folder_of(request);
    return format == Format::Idx ? load_idx_folder(dir, request.name) : load_cifar10(dir);
}

}  // namespace

std::string default_data_dir(std::string_view name) {
    if (name == "fashion-mnist") {
        return "/usr/share/datasets/fashion-mnist";
    }
    return "";
}

TrainTest load_dataset(const DatasetRequest& request) {
    TrainTest data = load_whole(request);
    keep_first(data.train, request.train_subset, "train_subset");
    keep_first(data.test, request.test_subset, "test_subset");
    data.train.images.shrink_to_fit();
    data.test.images.shrink_to_fit();
    return data;
}

std::string dataset_folder_problem(const DatasetRequest& request) {
    try {
        const Format format = format_of(request.name);
        if (format == Format::Synthetic) {
            return "";
        }
        const std::string dir = folder_of(request);
        if (format == Format::Idx) {
            find_idx_files(dir, request.name);
        } else {
            find_cifar10_folder(dir);
        }
        return "";
    } catch (const Error& e) {
        // An unknown name is the spec's problem (RunSpec::validate names it), not the folder's.
        return e.kind() == ErrorKind::DatasetMissing ? e.what() : "";
    }
}

}  // namespace scalelab::data
