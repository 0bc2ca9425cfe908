#include "data/idx_reader.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <utility>

#include "data/dataset_paths.h"
#include "data/file_byte_stream.h"
#include "data/quoted.h"
#include "error.h"

namespace scalelab::data {
namespace fs = std::filesystem;

namespace {

constexpr const char* kRedownload =
    "; the file is damaged or incomplete: download it again (or reinstall the package it came "
    "from)";

std::string hex32(std::uint32_t v) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "0x%08x", v);
    return buf;
}

[[noreturn]] void corrupt(const std::string& path, const std::string& what) {
    throw Error(ErrorKind::DatasetCorrupt,
                "dataset file " + quoted(path) + " " + what + kRedownload);
}

std::uint32_t be32(const std::vector<std::uint8_t>& b, std::size_t at) {
    return std::uint32_t(b[at]) << 24 | std::uint32_t(b[at + 1]) << 16 |
           std::uint32_t(b[at + 2]) << 8 | std::uint32_t(b[at + 3]);
}

// Opens a dataset file that find_idx_files found, or that the caller names; throws
// DatasetMissing when it is not there or is not a regular file.
FileByteStream open_dataset_file(const std::string& path) {
    if (!dataset_file_exists(path))
        throw Error(ErrorKind::DatasetMissing,
                    "dataset file " + quoted(path) + " does not exist; check the path");
    return FileByteStream(path);
}

// The header of an IDX file of `rank` dimensions: the magic and one size per dimension, fewer
// bytes when the file ends sooner (check_header says so).
std::vector<std::uint8_t> read_header(FileByteStream& in, const std::string& path, int rank) {
    std::vector<std::uint8_t> header(4 + 4 * std::size_t(rank));
    header.resize(in.read(header.data(), header.size()));
    if (const std::string damage = in.damage(); !damage.empty()) {
        corrupt(path, damage);
    }
    return header;
}

// Checks the 4-byte magic (0x00 0x00, type 0x08 = unsigned byte, rank) and that the header's
// sizes are all there; returns nothing, throws DatasetCorrupt.
void check_header(const std::vector<std::uint8_t>& b, const std::string& path, int rank) {
    const char* kind =
        rank == 3 ? "an image file (magic 0x00000803)" : "a label file (magic 0x00000801)";
    if (b.size() < 4) {
        corrupt(path, "is only " + std::to_string(b.size()) + " bytes long, too short for " + kind);
    }
    const std::uint32_t magic = be32(b, 0);
    if (b[0] != 0 || b[1] != 0) {
        corrupt(path, "is not an IDX file: it starts with " + hex32(magic) + " where " + kind +
                          " starts with its magic number");
    }
    if (b[2] != 0x08) {
        corrupt(path, "has magic " + hex32(magic) + ": its values are not unsigned bytes " +
                          "(type 0x08), but " + kind + " must hold unsigned bytes");
    }
    if (b[3] != rank) {
        std::string hint;
        if (b[3] == 1 && rank == 3) {
            hint = " (it looks like a label file: are the image and label files swapped?)";
        } else if (b[3] == 3 && rank == 1) {
            hint = " (it looks like an image file: are the image and label files swapped?)";
        }
        corrupt(path, "has magic " + hex32(magic) + ", i.e. " + std::to_string(b[3]) +
                          " dimensions, but " + kind + " has " + std::to_string(rank) + hint);
    }
    const std::size_t header = 4 + 4 * std::size_t(rank);
    if (b.size() < header) {
        corrupt(path, "is truncated: it ends inside its " + std::to_string(header) +
                          "-byte header (" + std::to_string(b.size()) + " bytes)");
    }
}

// Whether a file of in.stored_size() bytes can hold the `expected` bytes its header promises:
// a plain file must be that long, and deflate expands at most 1032 times, so a header promising
// more than that is refused before anything is allocated or inflated.
void check_declared_size(const FileByteStream& in, const std::string& path, std::uint64_t expected,
                         const std::string& promise) {
    constexpr std::uint64_t deflate_max_ratio = 1032;
    if (!in.gzip() && expected > in.stored_size()) {
        corrupt(path, "is truncated: its header promises " + promise + " (" +
                          std::to_string(expected) + " bytes in all) but it holds only " +
                          std::to_string(in.stored_size()) + " bytes");
    }
    if (in.gzip() && expected > in.stored_size() * deflate_max_ratio) {
        corrupt(path, "is truncated: its header promises " + promise + " (" +
                          std::to_string(expected) + " bytes in all) but its " +
                          std::to_string(in.stored_size()) + " compressed bytes hold at most " +
                          std::to_string(in.stored_size() * deflate_max_ratio));
    }
}

// The `expected - header_bytes` bytes that follow the header, read up to one byte beyond them:
// fewer is a cut-off download, more is something appended that we would otherwise silently
// ignore. Never reads further, however much more the file holds.
std::vector<std::uint8_t> read_body(FileByteStream& in, const std::string& path,
                                    std::size_t header_bytes, std::uint64_t expected,
                                    const std::string& promise) {
    check_declared_size(in, path, expected, promise);
    std::vector<std::uint8_t> body(std::size_t(expected - header_bytes));
    const std::size_t got = in.read(body.data(), body.size());
    std::uint8_t beyond = 0;
    const bool more = got == body.size() && in.read(&beyond, 1) == 1;
    if (const std::string damage = in.damage(); !damage.empty()) {
        corrupt(path, damage);
    }
    if (got < body.size()) {
        corrupt(path, "is truncated: its header promises " + promise + " (" +
                          std::to_string(expected) + " bytes in all) but it holds only " +
                          std::to_string(header_bytes + got) + " bytes");
    }
    if (more) {
        corrupt(path, "holds more than the " + promise + " its header promises (" +
                          std::to_string(expected) + " bytes in all)");
    }
    return body;
}

struct Images {
    std::uint32_t count = 0, rows = 0, cols = 0;
    std::vector<std::uint8_t> pixels;
};

Images read_images(const std::string& path) {
    FileByteStream in = open_dataset_file(path);
    const std::vector<std::uint8_t> header = read_header(in, path, 3);
    check_header(header, path, 3);
    Images im;
    im.count = be32(header, 4);
    im.rows = be32(header, 8);
    im.cols = be32(header, 12);
    // Bounds keep height*width inside int (Dataset's geometry type) and reject garbage sizes.
    constexpr std::uint32_t kMaxSide = 1u << 14;
    if (im.count == 0 || im.rows == 0 || im.cols == 0 || im.rows > kMaxSide || im.cols > kMaxSide) {
        corrupt(path, "has a header promising " + std::to_string(im.count) + " images of " +
                          std::to_string(im.rows) + "x" + std::to_string(im.cols) +
                          " pixels, which is not a usable image set");
    }
    const std::uint64_t expected = 16 + std::uint64_t(im.count) * im.rows * im.cols;
    im.pixels = read_body(in, path, header.size(), expected,
                          std::to_string(im.count) + " images of " + std::to_string(im.rows) + "x" +
                              std::to_string(im.cols) + " pixels");
    return im;
}

std::vector<std::uint8_t> read_labels(const std::string& path) {
    FileByteStream in = open_dataset_file(path);
    const std::vector<std::uint8_t> header = read_header(in, path, 1);
    check_header(header, path, 1);
    const std::uint32_t count = be32(header, 4);
    std::vector<std::uint8_t> b = read_body(in, path, header.size(), 8 + std::uint64_t(count),
                                            std::to_string(count) + " labels");
    for (std::size_t i = 0; i < b.size(); ++i) {
        if (b[i] >= 10) {
            corrupt(path, "holds label " + std::to_string(b[i]) + " at position " +
                              std::to_string(i) + ", but labels must be 0..9");
        }
    }
    return b;
}

std::string missing_folder_advice(std::string_view what) {
    if (what == "fashion-mnist") {
        return "install it with `apt-get install dataset-fashion-mnist` (default folder "
               "/usr/share/datasets/fashion-mnist) or name the folder with the four IDX files "
               "(--data on the command line, Folder in the window): train-images-idx3-ubyte, "
               "train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each "
               "optionally .gz";
    }
    return "name the folder with the four IDX files (--data on the command line, Folder in the "
           "window): train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, "
           "t10k-labels-idx1-ubyte, each optionally .gz";
}

}  // namespace

Dataset read_idx(const std::string& images_path, const std::string& labels_path) {
    Images im = read_images(images_path);
    std::vector<std::uint8_t> labels = read_labels(labels_path);
    if (labels.size() != im.count) {
        throw Error(ErrorKind::DatasetCorrupt,
                    "IDX image file " + quoted(images_path) + " holds " + std::to_string(im.count) +
                        " images but label file " + quoted(labels_path) + " holds " +
                        std::to_string(labels.size()) +
                        " labels; the two must come from the same set (both train or both "
                        "t10k): replace the mismatched file with a fresh download");
    }
    Dataset d;
    d.channels = 1;
    d.height = int(im.rows);
    d.width = int(im.cols);
    d.classes = 10;
    d.images = std::move(im.pixels);
    d.labels = std::move(labels);
    return d;
}

IdxFiles find_idx_files(const std::string& dir, std::string_view what) {
    const std::string name(what.empty() ? "IDX dataset" : what);
    if (dir.empty()) {
        throw Error(ErrorKind::DatasetMissing,
                    "no folder given for " + name + "; " + missing_folder_advice(what));
    }
    require_dataset_folder(dir, name, missing_folder_advice(what));

    IdxFiles files;
    const std::pair<const char*, std::string*> wanted[4] = {
        {"train-images-idx3-ubyte", &files.train_images},
        {"train-labels-idx1-ubyte", &files.train_labels},
        {"t10k-images-idx3-ubyte", &files.test_images},
        {"t10k-labels-idx1-ubyte", &files.test_labels}};
    std::string missing;
    for (const auto& [file, path] : wanted) {
        // Plain wins over .gz: a user who decompressed the files meant those.
        const fs::path plain = fs::path(dir) / file;
        const fs::path gz = fs::path(dir) / (std::string(file) + ".gz");
        if (dataset_file_exists(plain)) {
            *path = plain.string();
        } else if (dataset_file_exists(gz)) {
            *path = gz.string();
        } else {
            missing += (missing.empty() ? "" : ", ") + std::string(file) + "[.gz]";
        }
    }
    if (!missing.empty()) {
        throw Error(ErrorKind::DatasetMissing, "the " + name + " folder " + quoted(dir) +
                                                   " lacks " + missing + "; " +
                                                   missing_folder_advice(what));
    }
    return files;
}

TrainTest load_idx_folder(const std::string& dir, std::string_view what) {
    const IdxFiles files = find_idx_files(dir, what);
    TrainTest tt;
    tt.train = read_idx(files.train_images, files.train_labels);
    tt.test = read_idx(files.test_images, files.test_labels);
    if (tt.train.height != tt.test.height || tt.train.width != tt.test.width) {
        throw Error(ErrorKind::DatasetCorrupt,
                    "in " + quoted(dir) + " the training images are " +
                        std::to_string(tt.train.height) + "x" + std::to_string(tt.train.width) +
                        " but the test images are " + std::to_string(tt.test.height) + "x" +
                        std::to_string(tt.test.width) +
                        "; the files come from different datasets: put the four files of one "
                        "dataset in the folder");
    }
    return tt;
}

}  // namespace scalelab::data
