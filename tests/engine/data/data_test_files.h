#pragma once

// Small helpers for the engine/data tests: build IDX and CIFAR-10 files byte by byte, so that
// every reader test controls exactly what is on disk (and can break it on purpose).

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace scalelab::data::testing {

using Bytes = std::vector<std::uint8_t>;

inline void put_be32(Bytes& b, std::uint32_t v) {
    b.push_back(std::uint8_t(v >> 24));
    b.push_back(std::uint8_t(v >> 16));
    b.push_back(std::uint8_t(v >> 8));
    b.push_back(std::uint8_t(v));
}

// An IDX image file: magic 0x00000803, count, rows, cols, then the pixels.
inline Bytes idx_images(std::uint32_t count, std::uint32_t rows, std::uint32_t cols,
                        const Bytes& pixels, std::uint32_t magic = 0x00000803) {
    Bytes b;
    put_be32(b, magic);
    put_be32(b, count);
    put_be32(b, rows);
    put_be32(b, cols);
    b.insert(b.end(), pixels.begin(), pixels.end());
    return b;
}

// An IDX label file: magic 0x00000801, count, then the labels.
inline Bytes idx_labels(const Bytes& labels, std::uint32_t magic = 0x00000801) {
    Bytes b;
    put_be32(b, magic);
    put_be32(b, std::uint32_t(labels.size()));
    b.insert(b.end(), labels.begin(), labels.end());
    return b;
}

// Deterministic filler bytes, different for different `salt`.
inline Bytes pattern(std::size_t n, std::uint32_t salt, std::uint32_t modulo = 256) {
    Bytes b(n);
    std::uint32_t x = salt * 2654435761u + 12345u;
    for (auto& v : b) {
        x = x * 1664525u + 1013904223u;
        v = std::uint8_t((x >> 16) % modulo);
    }
    return b;
}

inline bool write_plain(const std::string& path, const Bytes& b) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    return bool(out);
}

inline bool write_gzip(const std::string& path, const Bytes& b) {
    gzFile gz = gzopen(path.c_str(), "wb");
    if (gz == nullptr) {
        return false;
    }
    const int written = b.empty() ? 0 : gzwrite(gz, b.data(), unsigned(b.size()));
    return gzclose(gz) == Z_OK && written == int(b.size());
}

// `head`, then `zeros` zero bytes, gzip-compressed a chunk at a time: a file a few thousand
// times smaller than what it expands to, written without holding the expanded bytes.
inline bool write_gzip_with_zeros(const std::string& path, const Bytes& head, std::size_t zeros) {
    gzFile gz = gzopen(path.c_str(), "wb9");
    if (gz == nullptr) {
        return false;
    }
    bool ok = gzwrite(gz, head.data(), unsigned(head.size())) == int(head.size());
    const Bytes chunk(std::size_t{1} << 20, 0);
    for (std::size_t left = zeros; ok && left > 0;) {
        const unsigned n = unsigned(std::min(left, chunk.size()));
        ok = gzwrite(gz, chunk.data(), n) == int(n);
        left -= n;
    }
    return gzclose(gz) == Z_OK && ok;
}

inline Bytes read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// CIFAR-10 binary records: one label byte then 3072 pixel bytes each.
inline Bytes cifar_records(const Bytes& labels, const Bytes& pixels) {
    Bytes b;
    for (std::size_t i = 0; i < labels.size(); ++i) {
        b.push_back(labels[i]);
        b.insert(b.end(), pixels.begin() + std::ptrdiff_t(i * 3072),
                 pixels.begin() + std::ptrdiff_t((i + 1) * 3072));
    }
    return b;
}

}  // namespace scalelab::data::testing
