#include "data/file_byte_stream.h"

#include <zlib.h>

#include <algorithm>
#include <filesystem>

#include "data/quoted.h"
#include "error.h"

namespace scalelab::data {

namespace {

gzFile as_gz(void* gz) {
    return static_cast<gzFile>(gz);
}

}  // namespace

FileByteStream::FileByteStream(const std::string& path) {
    std::error_code ec;
    stored_size_ = std::filesystem::file_size(path, ec);
    gzFile gz = ec ? nullptr : gzopen(path.c_str(), "rb");
    if (gz == nullptr)
        throw Error(ErrorKind::DatasetMissing,
                    "cannot open " + quoted(path) + "; check that it exists and is readable");
    gz_ = gz;
    gzbuffer(gz, 1 << 17);  // fewer, larger reads from disk than zlib's 8 KiB default
    gzip_ = gzdirect(gz) == 0;
}

FileByteStream::~FileByteStream() {
    gzclose_r(as_gz(gz_));
}

std::size_t FileByteStream::read(std::uint8_t* out, std::size_t n) {
    // gzread takes an unsigned count: large reads go in pieces.
    constexpr std::size_t piece = std::size_t{1} << 30;
    std::size_t done = 0;
    while (done < n) {
        const unsigned want = unsigned(std::min(piece, n - done));
        const int got = gzread(as_gz(gz_), out + done, want);
        if (got <= 0)
            break;
        done += std::size_t(got);
    }
    return done;
}

std::string FileByteStream::damage() const {
    // A truncated stream is reported as Z_BUF_ERROR ("unexpected end of file"), which gzread
    // does not treat as fatal, so look at the stream's error state explicitly.
    int errnum = Z_OK;
    const char* message = gzerror(as_gz(gz_), &errnum);
    if (errnum == Z_OK)
        return {};
    if (errnum == Z_ERRNO || !gzip_)
        return "could not be read to its end";
    const std::string detail = message != nullptr && *message != '\0' ? message : "zlib error";
    return "is not a valid gzip stream (" + detail + ")";
}

}  // namespace scalelab::data
