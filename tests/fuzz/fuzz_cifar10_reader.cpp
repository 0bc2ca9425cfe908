// Fuzzes the CIFAR-10 reader. Input: one byte whose lowest bit puts the files in the
// cifar-10-batches-bin subfolder (as the official tarball unpacks), then up to six parts
// (fuzz_input.h): data_batch_1.bin .. data_batch_5.bin and test_batch.bin; a part the input
// lacks is a missing file. corpus/cifar10_reader holds valid sets (one record per file) and a
// few broken ones.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "data/cifar10_reader.h"
#include "error.h"
#include "fuzz_input.h"
#include "scratch_folder.h"

using namespace scalelab;

namespace {

constexpr std::array<const char*, 6> file_names{"data_batch_1.bin", "data_batch_2.bin",
                                                "data_batch_3.bin", "data_batch_4.bin",
                                                "data_batch_5.bin", "test_batch.bin"};
constexpr std::size_t record_bytes = 1 + 3 * 32 * 32;

void require_cifar_set(const data::Dataset& set, std::size_t file_bytes) {
    fuzz::require(set.channels == 3 && set.height == 32 && set.width == 32 && set.classes == 10,
                  "a CIFAR-10 set is 3x32x32 images of 10 classes");
    fuzz::require(set.count() == file_bytes / record_bytes && file_bytes % record_bytes == 0,
                  "a CIFAR-10 set holds one image per record of its files");
    fuzz::require(set.images.size() == set.count() * set.image_size(),
                  "a CIFAR-10 set holds one image per label");
    for (std::uint8_t label : set.labels)
        fuzz::require(label < set.classes, "every CIFAR-10 label is a class");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fuzz::ScratchFolder folder;
    if (size == 0)
        return 0;
    const bool in_subfolder = (data[0] & 1) != 0;
    const auto parts = fuzz::split_parts(data + 1, size - 1, file_names.size());
    folder.clear();
    const std::string subfolder = in_subfolder ? "cifar-10-batches-bin/" : "";
    std::size_t train_bytes = 0;
    for (std::size_t i = 0; i < parts.size(); ++i) {
        folder.write(subfolder + file_names[i], parts[i]);
        train_bytes += i + 1 < file_names.size() ? parts[i].size() : 0;
    }

    try {
        const data::TrainTest sets = data::load_cifar10(folder.path().string());
        require_cifar_set(sets.train, train_bytes);
        require_cifar_set(sets.test, parts.back().size());
    } catch (const Error&) {
        // A missing or damaged file, refused with a message: what the reader promises.
    }
    return 0;
}
