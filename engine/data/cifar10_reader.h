#pragma once

#include <filesystem>
#include <string>

#include "data/dataset.h"

namespace scalelab::data {

// CIFAR-10, binary version (https://www.cs.toronto.edu/~kriz/cifar.html): `dir` holds
// data_batch_1.bin .. data_batch_5.bin (the training set, read in that order) and
// test_batch.bin. Each file is a run of 3073-byte records: one label byte (0..9) followed by
// 3x32x32 pixels, red plane, green plane, blue plane, each row-major, i.e. already CHW.
// If `dir` lacks the files but its subfolder cifar-10-batches-bin (what the official tarball
// unpacks to) has them, that subfolder is used.
//
// Throws scalelab::Error: DatasetMissing when the folder or any file is missing (naming them),
// DatasetCorrupt when a file's size is not a whole number of records or a label is > 9.
TrainTest load_cifar10(const std::string& dir);

// The folder load_cifar10(dir) reads the six files from: `dir` or its cifar-10-batches-bin
// subfolder. Only looks for the files, reads none; throws DatasetMissing as load_cifar10 does.
std::filesystem::path find_cifar10_folder(const std::string& dir);

}  // namespace scalelab::data
