#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace scalelab::data {

// A dataset file read from its start, plain or gzip-compressed (told apart by zlib from the
// magic bytes 1f 8b, not from the name), decompressed only as far as it is read: a reader that
// knows from a header how many bytes to expect reads that many and one more, and so never
// inflates a file that would expand to gigabytes beyond what its header declares.
class FileByteStream {
  public:
    // Opens `path`, which must be a regular file (see dataset_file_exists); throws
    // Error(DatasetMissing) when it cannot be opened.
    explicit FileByteStream(const std::string& path);
    ~FileByteStream();
    FileByteStream(const FileByteStream&) = delete;
    FileByteStream& operator=(const FileByteStream&) = delete;

    bool gzip() const { return gzip_; }
    // The file's size on disk: the compressed size of a gzip file.
    std::uint64_t stored_size() const { return stored_size_; }

    // Reads up to `n` bytes into `out`; fewer only at the end of the data or on an error, which
    // damage() then describes.
    std::size_t read(std::uint8_t* out, std::size_t n);

    // Why reading stopped early, as the end of a sentence about the file: "is not a valid gzip
    // stream (<reason>)" for a damaged or cut gzip stream, "could not be read to its end" for a
    // read error of the disk; "" when nothing went wrong.
    std::string damage() const;

  private:
    void* gz_ = nullptr;  // gzFile, kept out of this header with zlib's
    bool gzip_ = false;
    std::uint64_t stored_size_ = 0;
};

}  // namespace scalelab::data
