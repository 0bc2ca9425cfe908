#include "npz_file.h"

#include <zlib.h>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "whole_file_writer.h"

namespace scalelab {

namespace {

void put16(std::string& out, std::uint32_t value) {
    out.push_back(char(value & 0xff));
    out.push_back(char((value >> 8) & 0xff));
}

void put32(std::string& out, std::uint32_t value) {
    put16(out, value & 0xffff);
    put16(out, value >> 16);
}

std::uint32_t fits32(std::size_t value) {
    if (value > std::numeric_limits<std::uint32_t>::max())
        throw std::length_error("an .npz file past 4 GiB needs zip's 64-bit extension");
    return std::uint32_t(value);
}

// The .npy file of one array: magic, version 1.0, a header that numpy parses as a Python
// literal, padded with spaces to a multiple of 64 bytes with its newline, then the values
// (little-endian floats, as this machine's).
std::string npy_bytes(const NpzArray& array) {
    std::size_t count = 1;
    std::string shape;  // a Python tuple: (), (5,), (3, 4)
    for (const int dimension : array.shape) {
        count *= std::size_t(dimension);
        shape += (shape.empty() ? "" : ", ") + std::to_string(dimension);
    }
    if (array.shape.size() == 1)
        shape += ",";
    if (count != array.values.size())
        throw std::invalid_argument(array.name + ": the shape holds " + std::to_string(count) +
                                    " values, not " + std::to_string(array.values.size()));
    std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + shape + "), }";
    const std::size_t prefix = 10;  // magic (6), version (2), header length (2)
    header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
    header.push_back('\n');
    std::string out("\x93NUMPY\x01\x00", 8);
    put16(out, std::uint32_t(header.size()));
    out += header;
    out.append(reinterpret_cast<const char*>(array.values.data()), array.values.size_bytes());
    return out;
}

// A zip record's fields both headers share: version needed 2.0, no flags, stored, no date.
void put_file_fields(std::string& out, std::uint32_t crc, std::uint32_t size,
                     const std::string& name) {
    put16(out, 20);
    put16(out, 0);
    put16(out, 0);
    put16(out, 0);
    put16(out, 0x21);  // 1980-01-01
    put32(out, crc);
    put32(out, size);
    put32(out, size);
    put16(out, std::uint32_t(name.size()));
    put16(out, 0);  // no extra field
}

}  // namespace

std::string npz_bytes(const std::vector<NpzArray>& arrays) {
    std::string archive, directory;
    for (const NpzArray& array : arrays) {
        const std::string name = array.name + ".npy";
        const std::string data = npy_bytes(array);
        const auto crc = std::uint32_t(
            crc32(0L, reinterpret_cast<const Bytef*>(data.data()), fits32(data.size())));
        const std::uint32_t offset = fits32(archive.size());
        put32(archive, 0x04034b50);  // local file header
        put_file_fields(archive, crc, fits32(data.size()), name);
        archive += name;
        archive += data;
        put32(directory, 0x02014b50);  // central directory entry
        put16(directory, 20);          // made by zip 2.0
        put_file_fields(directory, crc, fits32(data.size()), name);
        put16(directory, 0);  // no comment
        put16(directory, 0);  // disk 0
        put16(directory, 0);  // internal attributes
        put32(directory, 0);  // external attributes
        put32(directory, offset);
        directory += name;
    }
    const std::uint32_t directory_offset = fits32(archive.size());
    archive += directory;
    put32(archive, 0x06054b50);  // end of central directory
    put16(archive, 0);           // this disk
    put16(archive, 0);           // the directory's disk
    if (arrays.size() > 0xffff)
        throw std::length_error(
            "an .npz file of more than 65535 arrays needs zip's 64-bit "
            "extension");
    put16(archive, std::uint32_t(arrays.size()));  // on this disk
    put16(archive, std::uint32_t(arrays.size()));  // in all
    put32(archive, fits32(directory.size()));
    put32(archive, directory_offset);
    put16(archive, 0);  // no comment
    return archive;
}

QString write_npz_file(const QString& path, const std::vector<NpzArray>& arrays) {
    const std::string bytes = npz_bytes(arrays);
    return write_whole_file(path, [&bytes](QIODevice& out) {
        return out.write(bytes.data(), qint64(bytes.size())) == qint64(bytes.size());
    });
}

}  // namespace scalelab
