#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace scalelab::data {

// An in-memory image classification dataset: `count` images of channels x height x width
// uint8 pixels, stored image after image in CHW order, and one label in [0, classes) each.
struct Dataset {
    int channels = 0;
    int height = 0;
    int width = 0;
    int classes = 10;
    std::vector<std::uint8_t> images;  // size() == count() * image_size()
    std::vector<std::uint8_t> labels;  // size() == count()

    std::size_t image_size() const { return std::size_t(channels) * height * width; }
    std::size_t count() const { return labels.size(); }
};

struct TrainTest {
    Dataset train;
    Dataset test;
};

// Per-channel mean and standard deviation of pixel values scaled to [0, 1]; the loader
// normalises x -> (x / 255 - mean[c]) / std[c]. Always computed on the training set.
struct Normalization {
    std::vector<float> mean;
    std::vector<float> stddev;
};

Normalization channel_statistics(const Dataset& train);

}  // namespace scalelab::data
