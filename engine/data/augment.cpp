#include "data/augment.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <numbers>

namespace scalelab::data {

namespace {

// Uniform in [lo, hi): 53 random bits, so the draw is exact and the same everywhere.
double uniform(SplitMix64& rng, double lo, double hi) {
    return lo + (hi - lo) * (double(rng.next() >> 11) * 0x1p-53);
}

bool coin(SplitMix64& rng) {
    return (rng.next() >> 63) != 0;
}

float clamp_pixel(double v) {
    return float(std::clamp(v, 0.0, 255.0));
}

// ITU-R 601 luma, as torchvision's rgb_to_grayscale.
double grey(double r, double g, double b) {
    return 0.2989 * r + 0.587 * g + 0.114 * b;
}

}  // namespace

CropFlip draw_flip(SplitMix64& rng) {
    return CropFlip{.dx = 0, .dy = 0, .flip = coin(rng)};
}

CropFlip draw_crop_flip(SplitMix64& rng) {
    CropFlip t;
    t.dx = int(rng.range(-kCropPadding, kCropPadding));
    t.dy = int(rng.range(-kCropPadding, kCropPadding));
    t.flip = coin(rng);
    return t;
}

void apply_crop_flip(const std::uint8_t* in, std::uint8_t* out, int channels, int height, int width,
                     const CropFlip& t) {
    for (int c = 0; c < channels; ++c) {
        const std::uint8_t* plane = in + std::size_t(c) * height * width;
        for (int y = 0; y < height; ++y) {
            std::uint8_t* row = out + (std::size_t(c) * height + y) * width;
            const int sy = y + t.dy;
            if (sy < 0 || sy >= height) {
                std::fill(row, row + width, std::uint8_t(0));
                continue;
            }
            const std::uint8_t* src = plane + std::size_t(sy) * width;
            for (int x = 0; x < width; ++x) {
                const int sx = (t.flip ? width - 1 - x : x) + t.dx;
                row[x] = (sx < 0 || sx >= width) ? std::uint8_t(0) : src[sx];
            }
        }
    }
}

AssessmentParams draw_assessment(SplitMix64& rng) {
    AssessmentParams p;
    p.flip = coin(rng);
    p.angle = uniform(rng, -10.0, 10.0);
    p.shear = uniform(rng, -10.0, 10.0);
    p.scale = uniform(rng, 0.8, 1.2);
    p.brightness = uniform(rng, 0.8, 1.2);
    p.contrast = uniform(rng, 0.8, 1.2);
    p.saturation = uniform(rng, 0.8, 1.2);
    static constexpr std::array<std::array<int, 3>, 6> orders{
        {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}}};
    p.order = orders[std::size_t(rng.below(6))];
    return p;
}

void apply_assessment(const std::uint8_t* in, float* out, int channels, int height, int width,
                      const AssessmentParams& p) {
    const std::size_t plane = std::size_t(height) * width;

    // torchvision's _get_inverse_affine_matrix with no translation and no y shear: the
    // forward map is M = R(angle) x Shear_x(shear) x scale about the centre; each output pixel
    // samples the input at centre + M^-1 (pixel - centre). Centre in pixel-index coordinates
    // (pixel centres at integers), as torchvision's (W/2, H/2) in pixel-corner coordinates.
    const double rad = std::numbers::pi / 180.0;
    const double rot = p.angle * rad, sx = p.shear * rad;
    const double a = std::cos(rot), b = -std::cos(rot) * std::tan(sx) - std::sin(rot);
    const double c = std::sin(rot), d = -std::sin(rot) * std::tan(sx) + std::cos(rot);
    const double m00 = d / p.scale, m01 = -b / p.scale, m10 = -c / p.scale, m11 = a / p.scale;
    const double cx = (width - 1) * 0.5, cy = (height - 1) * 0.5;

    for (int y = 0; y < height; ++y) {
        for (int x = 0; x < width; ++x) {
            const double u = x - cx, v = y - cy;
            const double fx = m00 * u + m01 * v + cx;  // in the flipped image
            const double fy = m10 * u + m11 * v + cy;
            const double x0 = std::floor(fx), y0 = std::floor(fy);
            const double wx = fx - x0, wy = fy - y0;
            // Bilinear with zero outside the image (grid_sample's padding_mode="zeros").
            const int ix[2] = {int(x0), int(x0) + 1};
            const int iy[2] = {int(y0), int(y0) + 1};
            const double weight_x[2] = {1.0 - wx, wx}, weight_y[2] = {1.0 - wy, wy};
            const std::size_t at = std::size_t(y) * width + x;
            for (int ch = 0; ch < channels; ++ch) {
                const std::uint8_t* src = in + std::size_t(ch) * plane;
                double sum = 0.0;
                for (int j = 0; j < 2; ++j) {
                    if (iy[j] < 0 || iy[j] >= height) {
                        continue;
                    }
                    for (int i = 0; i < 2; ++i) {
                        if (ix[i] < 0 || ix[i] >= width) {
                            continue;
                        }
                        const int col = p.flip ? width - 1 - ix[i] : ix[i];
                        sum += weight_y[j] * weight_x[i] *
                               double(src[std::size_t(iy[j]) * width + std::size_t(col)]);
                    }
                }
                out[std::size_t(ch) * plane + at] = clamp_pixel(sum);
            }
        }
    }

    // Colour jitter: each step blends with a reference image (ratio x + (1 - ratio) ref, the
    // form that returns x exactly for ratio 1) and clamps, as torchvision's _blend.
    for (const int step : p.order) {
        if (step == 0) {  // brightness: blend with black
            for (std::size_t k = 0; k < plane * std::size_t(channels); ++k) {
                out[k] = clamp_pixel(p.brightness * double(out[k]));
            }
        } else if (step == 1) {  // contrast: blend with the mean of the grey image
            // (Other channel counts than 3: the mean of all values, as for 1 channel.)
            const std::size_t values = channels == 3 ? plane : plane * std::size_t(channels);
            double total = 0.0;
            for (std::size_t k = 0; k < values; ++k) {
                total += channels == 3 ? grey(out[k], out[plane + k], out[2 * plane + k])
                                       : double(out[k]);
            }
            const double mean = values > 0 ? total / double(values) : 0.0;
            for (std::size_t k = 0; k < plane * std::size_t(channels); ++k) {
                out[k] = clamp_pixel(p.contrast * double(out[k]) + (1.0 - p.contrast) * mean);
            }
        } else if (channels == 3) {  // saturation: blend with the pixel's grey
            for (std::size_t k = 0; k < plane; ++k) {
                const double g = grey(out[k], out[plane + k], out[2 * plane + k]);
                for (int ch = 0; ch < 3; ++ch) {
                    float& o = out[std::size_t(ch) * plane + k];
                    o = clamp_pixel(p.saturation * double(o) + (1.0 - p.saturation) * g);
                }
            }
        }
    }
}

}  // namespace scalelab::data
