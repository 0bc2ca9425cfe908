#pragma once

#include <array>
#include <cstdint>

#include "data/rng.h"

namespace scalelab::data {

// The image transforms of training-time augmentation, in pixel space (values 0..255, before
// normalisation), on one NCHW image (C planes of H x W). The batch loader draws each sample's
// parameters from its own random stream (augment_seed) and applies them; the transforms
// themselves take explicit parameters so that tests can pass known ones.
//
// none: the image as it is. flip: horizontal flip with probability 1/2. crop_flip: random crop
// with zero padding 4 (torchvision's RandomCrop(32, padding=4)), then flip: the CIFAR-10
// recipe. assessment: the course assessment's set: flip, random affine (rotation and x shear
// uniform in [-10, 10] degrees, scale uniform in [0.8, 1.2], bilinear about the image centre,
// zero fill: torchvision's RandomAffine(10, shear=10, scale=(0.8, 1.2))), then colour jitter 0.2
// (torchvision's ColorJitter(0.2, 0.2, 0.2)), clamped to [0, 255].
//
// The engine's own enum, not train/run_spec.h's Augmentation: engine/data sits below
// engine/train and does not include it; the trainer maps one onto the other.
enum class AugmentMode { None, Flip, CropFlip, Assessment };

inline constexpr int kCropPadding = 4;

// The stream of sample `index` (of the dataset, not of the batch) in `epoch` on device `rank`.
// Different ranks get different streams, so N devices augment differently from one device
// (the issue asks for augmentation seeded per device); the same (seed, device count) still
// gives the same bytes.
inline std::uint64_t augment_seed(std::uint64_t seed, int rank, int epoch, std::uint32_t index) {
    return derive_seed(
        derive_seed(seed, std::uint64_t(std::int64_t(rank)), std::uint64_t(std::int64_t(epoch))),
        index);
}

// Crop offset and flip: output pixel (y, x) reads input (y + dy, x' + dx) with x' = W-1-x when
// flipped, else x; 0 outside the image. Mirroring x before adding the offset equals cropping
// first and flipping the crop.
struct CropFlip {
    int dx = 0, dy = 0;  // in [-kCropPadding, kCropPadding]
    bool flip = false;
};

CropFlip draw_flip(SplitMix64& rng);       // dx = dy = 0, flip with probability 1/2
CropFlip draw_crop_flip(SplitMix64& rng);  // dx, dy uniform in [-4, 4], flip with p = 1/2

void apply_crop_flip(const std::uint8_t* in, std::uint8_t* out, int channels, int height, int width,
                     const CropFlip& t);

// The assessment transform's parameters. The identity is the default: no flip, angle, shear 0,
// scale 1, jitter factors 1.
struct AssessmentParams {
    bool flip = false;
    double angle = 0;  // rotation, degrees (torchvision's sign: counter-clockwise on screen)
    double shear = 0;  // x shear, degrees
    double scale = 1;
    double brightness = 1;              // x -> b x
    double contrast = 1;                // x -> c x + (1 - c) mean(grey image)
    double saturation = 1;              // x -> s x + (1 - s) grey(pixel); 3-channel images only
    std::array<int, 3> order{0, 1, 2};  // the jitter steps' order: 0 bright, 1 contr., 2 sat.
};

// Flip, angle, shear, scale and factors uniform in their ranges, and a uniformly random order
// of the three jitter steps (ColorJitter applies them in random order).
AssessmentParams draw_assessment(SplitMix64& rng);

// Flip, then the affine (output pixel p samples the input bilinearly at
// centre + M^-1 (p - centre), M = rotation x shear x scale about the centre ((W-1)/2, (H-1)/2),
// neighbours outside the image count as 0), then brightness, contrast and saturation in
// `order`, each clamped to [0, 255] as torchvision does. Writes C*H*W floats in [0, 255].
// With the identity parameters the output equals the input exactly.
void apply_assessment(const std::uint8_t* in, float* out, int channels, int height, int width,
                      const AssessmentParams& p);

}  // namespace scalelab::data
