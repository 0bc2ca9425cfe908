#pragma once

#include <filesystem>
#include <string_view>

namespace scalelab::data {

// How the dataset readers look at a folder and its files before reading any, so that each way
// a path can be wrong gets a message of its own (each a scalelab::Error of kind DatasetMissing)
// and nothing but a regular file is ever opened: opening a FIFO would wait for a writer forever.

// Returns when `dir` is a folder whose files can be looked up. Throws otherwise:
//   "the <dataset> folder '<dir>' does not exist; <advice>"
//   "the <dataset> folder '<dir>' is not a folder; <advice>"
//   "the <dataset> folder '<dir>' cannot be read (<reason>); check its permissions and the path"
// `dataset` is the name the user typed ("mnist", "cifar10").
void require_dataset_folder(const std::filesystem::path& dir, std::string_view dataset,
                            std::string_view advice);

// True when `path` is a regular file (or a link to one), false when nothing is there. Throws
// when something else is there ("dataset file '<path>' is a FIFO (named pipe), not a regular
// file; check the path") or when it cannot be looked at (a loop of links, say).
bool dataset_file_exists(const std::filesystem::path& path);

}  // namespace scalelab::data
