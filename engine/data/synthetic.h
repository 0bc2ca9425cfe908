#pragma once

#include <cstdint>

#include "data/dataset.h"

namespace scalelab::data {

struct SyntheticConfig {
    int train = 8192;  // training images
    int test = 2048;   // test images
    int channels = 1;
    int size = 28;  // images are size x size
    int classes = 10;
    std::uint64_t seed = 0;
};

// A dataset that needs no files, for tests, demos and machines without Fashion-MNIST.
//
// Each class has a smooth prototype per channel: a background level plus a few random
// low-frequency "blobs" (bumps (1 - d^2/r^2)^2 of random centre, radius and signed amplitude).
// A sample is its class prototype moved by a small random shift, scaled by a random contrast,
// plus uniform pixel noise, clamped to 0..255. Classes are balanced (counts differ by at most
// one) and shuffled. Train and test come from the same distribution through different random
// streams, so test accuracy measures generalisation over shift and noise.
//
// Deterministic: the same config gives the same bytes on every machine, because everything is
// integer arithmetic on our own generator (data/rng.h); each sample has its own stream, derived
// from (seed, split, index).
//
// Throws scalelab::Error(InvalidSpec) for sizes out of range: train/test >= 1, channels 1..16,
// size 8..512, classes 2..256, and at most 8 GiB of pixels.
TrainTest make_synthetic(const SyntheticConfig& config);

}  // namespace scalelab::data
