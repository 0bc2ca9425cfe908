#include "data/dataset.h"

#include <algorithm>
#include <cmath>

#include "error.h"

namespace scalelab::data {

// Pixel sums are accumulated exactly in 64-bit integers (60000 x 784 pixels x 255^2 is about
// 3e12, far from overflow), so the only rounding is in the final divisions, done in double.
Normalization channel_statistics(const Dataset& train) {
    if (train.count() == 0 || train.image_size() == 0) {
        throw Error(ErrorKind::InvalidSpec,
                    "cannot compute normalisation statistics of an empty training set; "
                    "choose a dataset with at least one training image");
    }
    const std::size_t plane = std::size_t(train.height) * train.width;
    const std::size_t channels = std::size_t(train.channels);
    std::vector<std::uint64_t> sum(channels, 0), sum_sq(channels, 0);
    const std::uint8_t* px = train.images.data();
    for (std::size_t i = 0; i < train.count(); ++i) {
        for (std::size_t c = 0; c < channels; ++c) {
            std::uint64_t s = 0, q = 0;
            for (std::size_t k = 0; k < plane; ++k, ++px) {
                s += *px;
                q += std::uint64_t(*px) * *px;
            }
            sum[c] += s;
            sum_sq[c] += q;
        }
    }

    Normalization norm;
    const double n = double(train.count()) * double(plane);
    for (std::size_t c = 0; c < channels; ++c) {
        const double mean = double(sum[c]) / n;  // in pixel units, 0..255
        // Population variance E[x^2] - E[x]^2; rounding can push it a hair below zero.
        const double var = std::max(0.0, double(sum_sq[c]) / n - mean * mean);
        double stddev = std::sqrt(var) / 255.0;
        // A constant channel carries no information; a std of 1 makes the loader only centre
        // it instead of dividing by zero.
        if (stddev == 0.0) {
            stddev = 1.0;
        }
        norm.mean.push_back(float(mean / 255.0));
        norm.stddev.push_back(float(stddev));
    }
    return norm;
}

}  // namespace scalelab::data
