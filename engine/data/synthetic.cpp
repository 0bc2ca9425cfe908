#include "data/synthetic.h"

#include <algorithm>
#include <string>

#include "data/rng.h"
#include "error.h"

namespace scalelab::data {

namespace {

// Stream identifiers for derive_seed: one for the prototypes, one per split.
constexpr std::uint64_t kPrototypeStream = 0;
constexpr std::uint64_t kTrainStream = 1;
constexpr std::uint64_t kTestStream = 2;

constexpr int kBackground = 24;  // prototype level where no blob reaches
constexpr int kBlobsPerChannel = 4;
constexpr int kNoise = 40;  // pixel noise is uniform in [-kNoise, kNoise]

void check(bool ok, const std::string& message) {
    if (!ok) {
        throw Error(ErrorKind::InvalidSpec, "synthetic dataset: " + message);
    }
}

void validate(const SyntheticConfig& c) {
    check(c.train >= 1,
          "the training set size must be at least 1 (it is " + std::to_string(c.train) + ")");
    check(c.test >= 1,
          "the test set size must be at least 1 (it is " + std::to_string(c.test) + ")");
    check(c.channels >= 1 && c.channels <= 16,
          "channels must be 1..16 (it is " + std::to_string(c.channels) + ")");
    check(c.size >= 8 && c.size <= 512,
          "the image size must be 8..512 pixels (it is " + std::to_string(c.size) + ")");
    check(c.classes >= 2 && c.classes <= 256,
          "classes must be 2..256 (it is " + std::to_string(c.classes) + ")");
    const double bytes =
        (double(c.train) + double(c.test)) * c.channels * double(c.size) * double(c.size);
    check(bytes <= 8.0 * (1u << 30), "train + test images would take " +
                                         std::to_string(bytes / (1u << 30)) +
                                         " GiB; use fewer or smaller images (at most 8 GiB)");
}

// The prototypes of all classes, on a grid padded by `margin` on every side so that a shifted
// sample is a plain crop. Layout: [class][channel][y][x] with side size + 2 * margin.
struct Prototypes {
    int side = 0;
    int margin = 0;
    std::vector<std::int32_t> values;

    const std::int32_t* plane(int cls, int channel, int channels) const {
        return values.data() + (std::size_t(cls) * channels + channel) * side * side;
    }
};

Prototypes make_prototypes(const SyntheticConfig& c) {
    Prototypes p;
    p.margin = std::max(1, c.size / 9);
    p.side = c.size + 2 * p.margin;
    p.values.assign(std::size_t(c.classes) * c.channels * p.side * p.side, kBackground);
    for (int cls = 0; cls < c.classes; ++cls) {
        SplitMix64 rng(derive_seed(c.seed, kPrototypeStream, std::uint64_t(cls)));
        for (int ch = 0; ch < c.channels; ++ch) {
            std::int32_t* out =
                p.values.data() + (std::size_t(cls) * c.channels + ch) * p.side * p.side;
            for (int b = 0; b < kBlobsPerChannel; ++b) {
                // Centres keep away from the border so a blob is mostly inside the image.
                const std::int64_t cx = rng.range(c.size / 6, c.size - 1 - c.size / 6);
                const std::int64_t cy = rng.range(c.size / 6, c.size - 1 - c.size / 6);
                const std::int64_t r = rng.range(std::max(2, c.size / 7), std::max(3, c.size / 3));
                // Mostly bright blobs (like strokes on a dark ground), some dark ones that carve.
                const std::int64_t amp = rng.range(-90, 200);
                const std::int64_t r2 = r * r;
                for (int y = 0; y < p.side; ++y) {
                    for (int x = 0; x < p.side; ++x) {
                        const std::int64_t dx = (x - p.margin) - cx;
                        const std::int64_t dy = (y - p.margin) - cy;
                        const std::int64_t w = r2 - (dx * dx + dy * dy);
                        if (w > 0) {
                            // Integer division: the same result on every machine.
                            out[std::size_t(y) * p.side + x] +=
                                std::int32_t(amp * w * w / (r2 * r2));
                        }
                    }
                }
            }
        }
    }
    return p;
}

Dataset make_split(const SyntheticConfig& c, const Prototypes& proto, int count,
                   std::uint64_t stream) {
    Dataset d;
    d.channels = c.channels;
    d.height = c.size;
    d.width = c.size;
    d.classes = c.classes;

    // Balanced labels, then a Fisher-Yates shuffle so that classes are interleaved.
    d.labels.resize(std::size_t(count));
    for (int i = 0; i < count; ++i) {
        d.labels[std::size_t(i)] = std::uint8_t(i % c.classes);
    }
    SplitMix64 order(derive_seed(c.seed, stream, ~std::uint64_t(0)));
    for (std::size_t i = d.labels.size() - 1; i > 0; --i) {
        std::swap(d.labels[i], d.labels[order.below(i + 1)]);
    }

    d.images.resize(std::size_t(count) * d.image_size());
    std::uint8_t* out = d.images.data();
    for (int i = 0; i < count; ++i) {
        SplitMix64 rng(derive_seed(c.seed, stream, std::uint64_t(i)));
        const int shift_x = int(rng.range(-proto.margin, proto.margin));
        const int shift_y = int(rng.range(-proto.margin, proto.margin));
        const std::int32_t contrast = std::int32_t(rng.range(12, 20));  // in sixteenths
        for (int ch = 0; ch < c.channels; ++ch) {
            const std::int32_t* src = proto.plane(d.labels[std::size_t(i)], ch, c.channels);
            for (int y = 0; y < c.size; ++y) {
                const std::int32_t* row = src +
                                          std::size_t(y + proto.margin - shift_y) * proto.side +
                                          proto.margin - shift_x;
                for (int x = 0; x < c.size; ++x) {
                    std::int32_t v = kBackground + (row[x] - kBackground) * contrast / 16;
                    v += std::int32_t(rng.range(-kNoise, kNoise));
                    *out++ = std::uint8_t(std::clamp(v, 0, 255));
                }
            }
        }
    }
    return d;
}

}  // namespace

TrainTest make_synthetic(const SyntheticConfig& config) {
    validate(config);
    const Prototypes proto = make_prototypes(config);
    TrainTest tt;
    tt.train = make_split(config, proto, config.train, kTrainStream);
    tt.test = make_split(config, proto, config.test, kTestStream);
    return tt;
}

}  // namespace scalelab::data
