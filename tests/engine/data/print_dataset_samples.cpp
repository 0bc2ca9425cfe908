// Writes what the engine feeds a run, for tests/engine/data/check_data_port.py to compare with
// resources/pytorch/scalelab_data.py: the dataset as the trainer loads it (a RunSpec's dataset
// keys through dataset_request and load_dataset), its normalisation, and the batch loader's
// inputs for some training samples in one epoch on one device, augmented as the spec says.
//
// Usage: print_dataset_samples OUT_DIR KEY=VALUE...
//   keys: the spec's dataset, data_dir, seed, train_subset, test_subset, synthetic_train,
//   synthetic_test, synthetic_channels, synthetic_size and augment; rank (the device), epoch
//   (ScaleLab's, from 1) and indices (of training samples, "3,0,7").
// Files in OUT_DIR, raw: train_images.u8 and test_images.u8 (NCHW), train_labels.u8 and
// test_labels.u8, statistics.f32 (the means, then the standard deviations) and inputs.f32 (one
// image per index, NCHW). Prints the training set's "count channels height width".

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "data/batch_loader.h"
#include "data/load.h"
#include "train/dataset_request.h"
#include "train/run_spec.h"

using namespace scalelab;

namespace {

template <typename T>
void write(const std::string& path, const std::vector<T>& values) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()),
              std::streamsize(values.size() * sizeof(T)));
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: print_dataset_samples OUT_DIR KEY=VALUE...\n");
        return 2;
    }
    RunSpec spec;
    int rank = 0, epoch = 1;
    std::vector<std::uint32_t> indices;
    const std::map<std::string, std::function<void(const std::string&)>> setters{
        {"dataset", [&](const std::string& v) { spec.dataset = v; }},
        {"data_dir", [&](const std::string& v) { spec.data_dir = v; }},
        {"seed", [&](const std::string& v) { spec.seed = std::stoull(v); }},
        {"train_subset", [&](const std::string& v) { spec.train_subset = std::stoi(v); }},
        {"test_subset", [&](const std::string& v) { spec.test_subset = std::stoi(v); }},
        {"synthetic_train", [&](const std::string& v) { spec.synthetic_train = std::stoi(v); }},
        {"synthetic_test", [&](const std::string& v) { spec.synthetic_test = std::stoi(v); }},
        {"synthetic_channels",
         [&](const std::string& v) { spec.synthetic_channels = std::stoi(v); }},
        {"synthetic_size", [&](const std::string& v) { spec.synthetic_size = std::stoi(v); }},
        {"augment",
         [&](const std::string& v) {
             spec.augment = EnumNames<Augmentation>::table.parse(v).value();
         }},
        {"rank", [&](const std::string& v) { rank = std::stoi(v); }},
        {"epoch", [&](const std::string& v) { epoch = std::stoi(v); }},
        {"indices", [&](const std::string& v) {
             std::istringstream list(v);
             for (std::string index; std::getline(list, index, ',');)
                 indices.push_back(std::uint32_t(std::stoul(index)));
         }}};
    for (int k = 2; k < argc; ++k) {
        const std::string arg = argv[k];
        const std::size_t equals = arg.find('=');
        const auto setter = setters.find(arg.substr(0, equals));
        if (equals == std::string::npos || setter == setters.end()) {
            std::fprintf(stderr, "print_dataset_samples: unknown argument '%s'\n", argv[k]);
            return 2;
        }
        setter->second(arg.substr(equals + 1));
    }

    const data::TrainTest data = data::load_dataset(dataset_request(spec));
    const data::Normalization norm = data::channel_statistics(data.train);
    data::BatchLoader loader(data.train, norm,
                             {.batch = int(indices.size()),
                              .drop_last = false,
                              .augment = augment_mode(spec.augment),
                              .prefetch = 1,
                              .seed = spec.seed,
                              .rank = rank});
    loader.start_epoch(indices, epoch);

    const std::string dir = argv[1];
    write(dir + "/train_images.u8", data.train.images);
    write(dir + "/train_labels.u8", data.train.labels);
    write(dir + "/test_images.u8", data.test.images);
    write(dir + "/test_labels.u8", data.test.labels);
    std::vector<float> statistics = norm.mean;
    statistics.insert(statistics.end(), norm.stddev.begin(), norm.stddev.end());
    write(dir + "/statistics.f32", statistics);
    write(dir + "/inputs.f32", loader.next()->images);
    std::printf("%zu %d %d %d\n", data.train.count(), data.train.channels, data.train.height,
                data.train.width);
    return 0;
}
