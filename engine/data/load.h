#pragma once

#include <string>
#include <string_view>

#include "data/dataset.h"
#include "data/synthetic.h"

namespace scalelab::data {

// What to load: the dataset's name (fashion-mnist, mnist, cifar10, synthetic), its folder
// (empty: the name's default folder), and the generator's settings for "synthetic".
struct DatasetRequest {
    std::string name;
    std::string dir;
    SyntheticConfig synthetic;
    // Keep only the first this many images of the training and the test set (0: all of them).
    std::size_t train_subset = 0;
    std::size_t test_subset = 0;
};

// The folder a dataset is read from when the user names none: Debian's dataset-fashion-mnist
// package for "fashion-mnist", "" for the others (they have no standard place).
std::string default_data_dir(std::string_view name);

// The one entry point the trainer, CLI and GUI use. Throws scalelab::Error: InvalidSpec for an
// unknown name (listing the valid ones), DatasetMissing for mnist/cifar10 without a folder or
// a folder without the files, and whatever the readers throw (see idx_reader.h,
// cifar10_reader.h, synthetic.h); InvalidSpec for a subset larger than its set.
TrainTest load_dataset(const DatasetRequest& request);

// What keeps load_dataset(request) from finding the dataset's files: exactly the message it
// would throw for a missing folder or file, or "" when the files are all there. Only looks for
// the files, reads none, so it is cheap enough to call on every keystroke. "" for synthetic
// data (it needs no folder) and for an unknown name (that is not a folder's problem).
std::string dataset_folder_problem(const DatasetRequest& request);

}  // namespace scalelab::data
