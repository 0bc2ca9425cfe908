#pragma once

#include <string>
#include <string_view>

#include "data/dataset.h"

namespace scalelab::data {

// Readers for the IDX format of MNIST and Fashion-MNIST (http://yann.lecun.com/exdb/mnist/):
// a big-endian header (magic 0x00000803 and three sizes for uint8 images, 0x00000801 and one
// size for uint8 labels) followed by the raw bytes. Files may be gzip-compressed or plain; the
// two are told apart by the gzip magic bytes 1f 8b, not by the file name.
//
// Every failure is a scalelab::Error: DatasetMissing when a folder or file is not there,
// DatasetCorrupt when a file is there but is not a well-formed uint8 IDX file of the expected
// kind (wrong magic or rank, fewer or more bytes than the header promises, image and label
// counts that differ, a label >= 10). Messages name the file and say what to do. A file is read
// as far as its header declares and one byte more, never further: a .gz that would expand to
// gigabytes past its declared size costs no more than a well-formed one.

// One image file and its label file: a 1-channel Dataset of 10 classes.
Dataset read_idx(const std::string& images_path, const std::string& labels_path);

// The paths of the four standard files of a folder.
struct IdxFiles {
    std::string train_images;
    std::string train_labels;
    std::string test_images;
    std::string test_labels;
};

// The four standard files of `dir`, each either plain or with ".gz" (plain wins if both exist):
// train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
// t10k-labels-idx1-ubyte. Only looks for them, reads none: throws DatasetMissing when `dir` is
// empty, not a folder, or lacks any of them (naming all that are missing). `what` is the
// dataset's name as the user types it ("mnist", "fashion-mnist"); it is used in messages, and
// for "fashion-mnist" a missing folder's message says how to install Debian's
// dataset-fashion-mnist package.
IdxFiles find_idx_files(const std::string& dir, std::string_view what);

// Reads the files find_idx_files(dir, what) finds: the train and test sets.
TrainTest load_idx_folder(const std::string& dir, std::string_view what);

}  // namespace scalelab::data
