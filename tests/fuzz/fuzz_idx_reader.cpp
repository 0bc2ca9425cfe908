// Fuzzes the IDX reader (MNIST, Fashion-MNIST) with an image file and a label file, plain or
// gzip. Input: two parts (fuzz_input.h), the image file then the label file; corpus/idx_reader
// holds valid pairs of both forms and a few broken ones.

#include <cstddef>
#include <cstdint>

#include "data/idx_reader.h"
#include "error.h"
#include "fuzz_input.h"
#include "scratch_folder.h"

using namespace scalelab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const fuzz::ScratchFolder folder;
    const auto parts = fuzz::split_parts(data, size, 2);
    folder.clear();
    const std::string images = (folder.path() / "images").string();
    const std::string labels = (folder.path() / "labels").string();
    if (parts.size() > 0)
        folder.write("images", parts[0]);
    if (parts.size() > 1)
        folder.write("labels", parts[1]);

    try {
        const data::Dataset set = data::read_idx(images, labels);
        fuzz::require(set.channels == 1 && set.height > 0 && set.width > 0 && set.classes == 10,
                      "an IDX set is 1-channel images of 10 classes");
        fuzz::require(set.count() > 0 && set.images.size() == set.count() * set.image_size(),
                      "an IDX set holds one image per label");
        for (std::uint8_t label : set.labels)
            fuzz::require(label < set.classes, "every IDX label is a class");
    } catch (const Error&) {
        // A file the reader refuses, with a message: what it promises for bad input.
    }
    return 0;
}
