#pragma once

#include <QString>

#include <span>
#include <string>
#include <vector>

namespace scalelab {

// One array of an .npz file: float32, C order.
struct NpzArray {
    std::string name;        // the member is <name>.npy
    std::vector<int> shape;  // empty: a scalar
    std::span<const float> values;
};

// The bytes of an .npz file, as numpy.savez writes it and numpy.load reads it: a zip archive
// (stored, not compressed) of one .npy file (format 1.0, '<f4', C order) per array. Each
// array's values must number the product of its shape. Throws std::length_error past the zip
// format's 4 GiB without its 64-bit extension.
std::string npz_bytes(const std::vector<NpzArray>& arrays);

// Writes npz_bytes to `path` whole or not at all (write_whole_file); the reason when it could
// not, empty when it did.
QString write_npz_file(const QString& path, const std::vector<NpzArray>& arrays);

}  // namespace scalelab
