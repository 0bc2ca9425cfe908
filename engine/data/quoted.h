#pragma once

#include <string>

namespace scalelab::data {

// A file or folder name as the dataset readers' messages show it: 'like this'.
inline std::string quoted(const std::string& path) {
    return "'" + path + "'";
}

}  // namespace scalelab::data
