#include "data/cifar10_reader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "data/dataset_paths.h"
#include "data/quoted.h"
#include "error.h"

namespace scalelab::data {
namespace fs = std::filesystem;

namespace {

constexpr int kSide = 32;
constexpr std::size_t kImageBytes = 3 * kSide * kSide;
constexpr std::size_t kRecordBytes = 1 + kImageBytes;

constexpr const char* kTrainFiles[5] = {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                        "data_batch_4.bin", "data_batch_5.bin"};
constexpr const char* kTestFile = "test_batch.bin";

constexpr const char* kAdvice =
    "name the folder of the CIFAR-10 binary version (--data on the command line, Folder in the "
    "window): cifar-10-binary.tar.gz unpacked, which holds data_batch_1.bin .. data_batch_5.bin "
    "and test_batch.bin";

[[noreturn]] void corrupt(const fs::path& path, const std::string& what) {
    throw Error(ErrorKind::DatasetCorrupt,
                "CIFAR-10 file " + quoted(path.string()) + " " + what +
                    "; the file is damaged, incomplete or not from the binary version: download "
                    "cifar-10-binary.tar.gz again and unpack it");
}

// Appends the records of one file to `out`. The file size is checked before reading, so a
// short or padded file is reported as such rather than as a half-read record.
void append_file(const fs::path& path, Dataset& out) {
    std::error_code ec;
    const std::uintmax_t size = fs::file_size(path, ec);
    if (ec) {
        throw Error(ErrorKind::DatasetMissing, "cannot read the size of " + quoted(path.string()) +
                                                   " (" + ec.message() +
                                                   "); check that it is a readable file");
    }
    if (size == 0 || size % kRecordBytes != 0) {
        corrupt(path, "is " + std::to_string(size) +
                          " bytes long, which is not a whole number of 3073-byte records (1 "
                          "label byte + 3x32x32 pixels)");
    }
    const std::size_t records = std::size_t(size / kRecordBytes);

    std::ifstream in(path, std::ios::binary);
    if (!in) {
        throw Error(ErrorKind::DatasetMissing,
                    "cannot open " + quoted(path.string()) + "; check that it is readable");
    }
    std::vector<std::uint8_t> buf(static_cast<std::size_t>(size));
    in.read(reinterpret_cast<char*>(buf.data()), std::streamsize(buf.size()));
    if (in.gcount() != std::streamsize(buf.size())) {
        corrupt(path, "could not be read to its end");
    }

    const std::size_t first = out.labels.size();
    out.labels.resize(first + records);
    out.images.resize((first + records) * kImageBytes);
    for (std::size_t r = 0; r < records; ++r) {
        const std::uint8_t* rec = buf.data() + r * kRecordBytes;
        if (rec[0] > 9) {
            corrupt(path, "holds label " + std::to_string(rec[0]) + " in record " +
                              std::to_string(r) + " (byte offset " +
                              std::to_string(r * kRecordBytes) + "), but labels must be 0..9");
        }
        out.labels[first + r] = rec[0];
        std::copy(rec + 1, rec + kRecordBytes, out.images.begin() + (first + r) * kImageBytes);
    }
}

Dataset empty_cifar() {
    Dataset d;
    d.channels = 3;
    d.height = kSide;
    d.width = kSide;
    d.classes = 10;
    return d;
}

bool has_all_files(const fs::path& dir) {
    std::error_code ec;
    for (const char* f : kTrainFiles) {
        if (!fs::is_regular_file(dir / f, ec)) {
            return false;
        }
    }
    return fs::is_regular_file(dir / kTestFile, ec);
}

}  // namespace

std::filesystem::path find_cifar10_folder(const std::string& dir_name) {
    if (dir_name.empty()) {
        throw Error(ErrorKind::DatasetMissing,
                    std::string("no folder given for cifar10; ") + kAdvice);
    }
    fs::path dir(dir_name);
    require_dataset_folder(dir, "cifar10", kAdvice);
    if (!has_all_files(dir) && has_all_files(dir / "cifar-10-batches-bin")) {
        dir /= "cifar-10-batches-bin";
    }

    std::string missing;
    auto note_missing = [&](const char* f) {
        if (!dataset_file_exists(dir / f)) {
            missing += (missing.empty() ? "" : ", ") + std::string(f);
        }
    };
    for (const char* f : kTrainFiles) {
        note_missing(f);
    }
    note_missing(kTestFile);
    if (!missing.empty()) {
        throw Error(ErrorKind::DatasetMissing, "the cifar10 folder " + quoted(dir.string()) +
                                                   " lacks " + missing + "; " + kAdvice);
    }
    return dir;
}

TrainTest load_cifar10(const std::string& dir_name) {
    const fs::path dir = find_cifar10_folder(dir_name);
    std::error_code ec;
    TrainTest tt{empty_cifar(), empty_cifar()};
    // Reserve the training set once (150 MB): growing it file by file would copy it 4 times.
    std::uintmax_t train_bytes = 0;
    bool sizes_known = true;
    for (const char* f : kTrainFiles) {
        const std::uintmax_t size = fs::file_size(dir / f, ec);
        sizes_known = sizes_known && !ec;
        train_bytes += ec ? 0 : size;
    }
    if (sizes_known) {
        tt.train.images.reserve(std::size_t(train_bytes / kRecordBytes * kImageBytes));
        tt.train.labels.reserve(std::size_t(train_bytes / kRecordBytes));
    }
    for (const char* f : kTrainFiles) {
        append_file(dir / f, tt.train);
    }
    append_file(dir / kTestFile, tt.test);
    return tt;
}

}  // namespace scalelab::data
