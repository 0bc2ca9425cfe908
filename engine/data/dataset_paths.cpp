#include "data/dataset_paths.h"

#include <string>

#include "data/quoted.h"
#include "error.h"

namespace scalelab::data {
namespace fs = std::filesystem;

namespace {

// What a non-regular file is, as a message names it.
std::string kind_of(fs::file_type type) {
    switch (type) {
        case fs::file_type::directory:
            return "a folder";
        case fs::file_type::fifo:
            return "a FIFO (named pipe)";
        case fs::file_type::character:
            return "a character device";
        case fs::file_type::block:
            return "a block device";
        case fs::file_type::socket:
            return "a socket";
        default:
            return "a special file";
    }
}

[[noreturn]] void folder_problem(const fs::path& dir, std::string_view dataset,
                                 const std::string& what) {
    throw Error(ErrorKind::DatasetMissing,
                "the " + std::string(dataset) + " folder " + quoted(dir.string()) + " " + what);
}

}  // namespace

void require_dataset_folder(const fs::path& dir, std::string_view dataset,
                            std::string_view advice) {
    std::error_code ec;
    const fs::file_status status = fs::status(dir, ec);
    if (status.type() == fs::file_type::not_found)
        folder_problem(dir, dataset, "does not exist; " + std::string(advice));
    if (!ec && !fs::is_directory(status))
        folder_problem(dir, dataset, "is not a folder; " + std::string(advice));
    // A folder without search permission still stats as a folder; its "." does not.
    const bool searchable = !ec && fs::is_directory(fs::status(dir / ".", ec));
    if (!searchable)
        folder_problem(dir, dataset,
                       "cannot be read (" + ec.message() + "); check its permissions and the path");
}

bool dataset_file_exists(const fs::path& path) {
    std::error_code ec;
    const fs::file_status status = fs::status(path, ec);
    if (status.type() == fs::file_type::not_found)
        return false;
    if (ec)
        throw Error(ErrorKind::DatasetMissing, "dataset file " + quoted(path.string()) +
                                                   " cannot be read (" + ec.message() +
                                                   "); check the path and its permissions");
    if (!fs::is_regular_file(status))
        throw Error(ErrorKind::DatasetMissing, "dataset file " + quoted(path.string()) + " is " +
                                                   kind_of(status.type()) +
                                                   ", not a regular file; check the path");
    return true;
}

}  // namespace scalelab::data
