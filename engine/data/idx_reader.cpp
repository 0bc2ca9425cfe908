#include "data/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <utility>

#include "data/dataset_paths.h"
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

// gzread also passes plain files through, but detecting the magic ourselves keeps the plain
// path a simple bulk read and lets us say which form a damaged file was in.
bool is_gzip(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    unsigned char magic[2] = {0, 0};
    in.read(reinterpret_cast<char*>(magic), 2);
    return in.gcount() == 2 && magic[0] == 0x1f && magic[1] == 0x8b;
}

std::vector<std::uint8_t> read_gzip(const std::string& path) {
    gzFile gz = gzopen(path.c_str(), "rb");
    if (gz == nullptr) {
        throw Error(ErrorKind::DatasetMissing,
                    "cannot open " + quoted(path) + "; check that it exists and is readable");
    }
    gzbuffer(gz, 1 << 17);  // fewer, larger reads from disk than zlib's 8 KiB default
    std::vector<std::uint8_t> bytes;
    constexpr unsigned kChunk = 1u << 20;
    for (;;) {
        const std::size_t old = bytes.size();
        bytes.resize(old + kChunk);
        const int got = gzread(gz, bytes.data() + old, kChunk);
        bytes.resize(old + std::size_t(std::max(got, 0)));
        if (got <= 0) {
            break;
        }
    }
    // A truncated stream is reported as Z_BUF_ERROR ("unexpected end of file"), which gzread
    // does not treat as fatal, so look at the stream's error state explicitly.
    int errnum = Z_OK;
    const char* message = gzerror(gz, &errnum);
    const std::string detail = message != nullptr ? message : "";
    const int closed = gzclose_r(gz);
    if (errnum != Z_OK || closed != Z_OK) {
        corrupt(path,
                "is not a valid gzip stream (" + (detail.empty() ? "zlib error" : detail) + ")");
    }
    return bytes;
}

std::vector<std::uint8_t> read_plain(const std::string& path) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        throw Error(ErrorKind::DatasetMissing,
                    "cannot open " + quoted(path) + "; check that it exists and is readable");
    }
    const std::streamsize size = in.tellg();
    std::vector<std::uint8_t> bytes(std::size_t(std::max<std::streamsize>(size, 0)));
    in.seekg(0);
    in.read(reinterpret_cast<char*>(bytes.data()), std::streamsize(bytes.size()));
    if (in.gcount() != std::streamsize(bytes.size())) {
        corrupt(path, "could not be read to its end");
    }
    return bytes;
}

// The whole content of `path`, decompressed if it is gzip.
std::vector<std::uint8_t> read_file_bytes(const std::string& path) {
    if (!dataset_file_exists(path)) {
        throw Error(ErrorKind::DatasetMissing,
                    "dataset file " + quoted(path) + " does not exist; check the path");
    }
    return is_gzip(path) ? read_gzip(path) : read_plain(path);
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

// Exactly `expected` bytes must follow the header: fewer is a cut-off download, more is
// something appended that we would otherwise silently ignore.
void check_size(const std::vector<std::uint8_t>& b, const std::string& path, std::uint64_t expected,
                const std::string& promise) {
    if (b.size() < expected) {
        corrupt(path, "is truncated: its header promises " + promise + " (" +
                          std::to_string(expected) + " bytes in all) but it holds only " +
                          std::to_string(b.size()) + " bytes");
    }
    if (b.size() > expected) {
        corrupt(path, "has " + std::to_string(b.size() - expected) +
                          " bytes of trailing data after the " + promise + " its header promises");
    }
}

struct Images {
    std::uint32_t count = 0, rows = 0, cols = 0;
    std::vector<std::uint8_t> pixels;
};

Images read_images(const std::string& path) {
    std::vector<std::uint8_t> b = read_file_bytes(path);
    check_header(b, path, 3);
    Images im;
    im.count = be32(b, 4);
    im.rows = be32(b, 8);
    im.cols = be32(b, 12);
    // Bounds keep height*width inside int (Dataset's geometry type) and reject garbage sizes.
    constexpr std::uint32_t kMaxSide = 1u << 14;
    if (im.count == 0 || im.rows == 0 || im.cols == 0 || im.rows > kMaxSide || im.cols > kMaxSide) {
        corrupt(path, "has a header promising " + std::to_string(im.count) + " images of " +
                          std::to_string(im.rows) + "x" + std::to_string(im.cols) +
                          " pixels, which is not a usable image set");
    }
    const std::uint64_t expected = 16 + std::uint64_t(im.count) * im.rows * im.cols;
    check_size(b, path, expected,
               std::to_string(im.count) + " images of " + std::to_string(im.rows) + "x" +
                   std::to_string(im.cols) + " pixels");
    // Drop the header in place and keep the buffer: no second copy of up to ~47 MB.
    b.erase(b.begin(), b.begin() + 16);
    im.pixels = std::move(b);
    return im;
}

std::vector<std::uint8_t> read_labels(const std::string& path) {
    std::vector<std::uint8_t> b = read_file_bytes(path);
    check_header(b, path, 1);
    const std::uint32_t count = be32(b, 4);
    check_size(b, path, 8 + std::uint64_t(count), std::to_string(count) + " labels");
    b.erase(b.begin(), b.begin() + 8);
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
               "/usr/share/datasets/fashion-mnist) or point --data at a folder with the four "
               "IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, "
               "t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally .gz)";
    }
    return "point --data at a folder with the four IDX files (train-images-idx3-ubyte, "
           "train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each "
           "optionally .gz)";
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
