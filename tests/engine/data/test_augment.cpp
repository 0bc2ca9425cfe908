// The augmentation transforms of data/augment.h with explicit parameters: crop and flip move
// pixels where they should, the assessment transform is the identity for identity parameters,
// rotates, shears and scales about the centre, jitters colours as torchvision's formulas, and
// stays in [0, 255]; the random draws are deterministic per stream and within their ranges.

#include <QtTest>

#include <cmath>
#include <set>
#include <vector>

#include "data/augment.h"
#include "data/rng.h"

using namespace scalelab;
using namespace scalelab::data;

namespace {

// A C x H x W image of pseudo-random bytes.
std::vector<std::uint8_t> random_image(int channels, int height, int width, std::uint64_t seed) {
    SplitMix64 rng(seed);
    std::vector<std::uint8_t> v(std::size_t(channels) * height * width);
    for (std::uint8_t& b : v) {
        b = std::uint8_t(rng.below(256));
    }
    return v;
}

// Pixel (c, y, x) of a C x H x W image.
template <typename T>
T at(const std::vector<T>& v, int height, int width, int c, int y, int x) {
    return v[(std::size_t(c) * height + y) * width + x];
}

bool same_params(const AssessmentParams& a, const AssessmentParams& b) {
    return a.flip == b.flip && a.angle == b.angle && a.shear == b.shear && a.scale == b.scale &&
           a.brightness == b.brightness && a.contrast == b.contrast &&
           a.saturation == b.saturation && a.order == b.order;
}

}  // namespace

class TestAugment : public QObject {
    Q_OBJECT

  private slots:
    // Each of seed, rank, epoch and index changes the stream; the same tuple gives the same.
    void seedKeysEveryComponent() {
        const std::uint64_t base = augment_seed(7, 1, 3, 42);
        QCOMPARE(augment_seed(7, 1, 3, 42), base);
        QVERIFY(augment_seed(8, 1, 3, 42) != base);
        QVERIFY(augment_seed(7, 0, 3, 42) != base);
        QVERIFY(augment_seed(7, 1, 4, 42) != base);
        QVERIFY(augment_seed(7, 1, 3, 43) != base);
        QVERIFY(augment_seed(7, 3, 1, 42) != base);  // rank and epoch are not interchangeable
    }

    void flipMirrorsAndNoFlipIsIdentity() {
        const int c = 3, h = 5, w = 7;
        const std::vector<std::uint8_t> in = random_image(c, h, w, 1);
        std::vector<std::uint8_t> out(in.size());
        apply_crop_flip(in.data(), out.data(), c, h, w, CropFlip{0, 0, false});
        QVERIFY(out == in);
        apply_crop_flip(in.data(), out.data(), c, h, w, CropFlip{0, 0, true});
        for (int ch = 0; ch < c; ++ch) {
            for (int y = 0; y < h; ++y) {
                for (int x = 0; x < w; ++x) {
                    QCOMPARE(at(out, h, w, ch, y, x), at(in, h, w, ch, y, w - 1 - x));
                }
            }
        }
        // draw_flip never crops, and flips about half the time.
        SplitMix64 rng(3);
        int flips = 0;
        for (int k = 0; k < 1000; ++k) {
            const CropFlip t = draw_flip(rng);
            QCOMPARE(t.dx, 0);
            QCOMPARE(t.dy, 0);
            flips += t.flip ? 1 : 0;
        }
        QVERIFY2(flips > 430 && flips < 570, qPrintable(QString::number(flips)));
    }

    // A crop keeps the size and moves each pixel by (dx, dy), |dx|, |dy| <= 4, zero outside.
    void cropMovesContentByAtMostFour() {
        const int c = 2, h = 9, w = 8;
        std::vector<std::uint8_t> in(std::size_t(c) * h * w);
        for (std::size_t k = 0; k < in.size(); ++k) {
            in[k] = std::uint8_t(1 + k);  // distinct, none 0
        }
        SplitMix64 rng(11);
        std::set<int> dxs, dys;
        for (int k = 0; k < 400; ++k) {
            const CropFlip t = draw_crop_flip(rng);
            QVERIFY(std::abs(t.dx) <= 4 && std::abs(t.dy) <= 4);
            dxs.insert(t.dx);
            dys.insert(t.dy);
            std::vector<std::uint8_t> out(in.size(), 99);
            apply_crop_flip(in.data(), out.data(), c, h, w, CropFlip{t.dx, t.dy, false});
            for (int ch = 0; ch < c; ++ch) {
                for (int y = 0; y < h; ++y) {
                    for (int x = 0; x < w; ++x) {
                        const int sy = y + t.dy, sx = x + t.dx;
                        const bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
                        QCOMPARE(at(out, h, w, ch, y, x),
                                 inside ? at(in, h, w, ch, sy, sx) : std::uint8_t(0));
                    }
                }
            }
        }
        QCOMPARE(int(dxs.size()), 9);
        QCOMPARE(int(dys.size()), 9);
    }

    // Identity parameters return the image exactly, for 1 and 3 channels.
    void assessmentIdentityIsExact() {
        for (const int c : {1, 3}) {
            const int h = 6, w = 5;
            const std::vector<std::uint8_t> in = random_image(c, h, w, std::uint64_t(c));
            std::vector<float> out(in.size(), -1.0f);
            apply_assessment(in.data(), out.data(), c, h, w, AssessmentParams{});
            for (std::size_t k = 0; k < in.size(); ++k) {
                QCOMPARE(out[k], float(in[k]));
            }
            AssessmentParams flip;
            flip.flip = true;
            apply_assessment(in.data(), out.data(), c, h, w, flip);
            for (int ch = 0; ch < c; ++ch) {
                for (int y = 0; y < h; ++y) {
                    for (int x = 0; x < w; ++x) {
                        QCOMPARE(at(out, h, w, ch, y, x), float(at(in, h, w, ch, y, w - 1 - x)));
                    }
                }
            }
        }
    }

    // The geometry about the centre, on an odd square image whose centre is a pixel.
    void assessmentGeometry() {
        const int h = 5, w = 5;
        const std::vector<std::uint8_t> in = random_image(1, h, w, 9);
        std::vector<float> out(in.size());
        auto near = [](float a, float b) { return std::abs(a - b) < 1e-3f; };

        // 90 degrees: a quarter turn; output (y, x) reads input row 4 - x, column y.
        AssessmentParams rot;
        rot.angle = 90;
        apply_assessment(in.data(), out.data(), 1, h, w, rot);
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
                QVERIFY2(near(at(out, h, w, 0, y, x), float(at(in, h, w, 0, w - 1 - x, y))),
                         qPrintable(QString("rotation at %1,%2").arg(y).arg(x)));
            }
        }
        // x shear of 45 degrees: row y reads input row y shifted by (y - 2); centre row fixed;
        // what falls outside is 0.
        AssessmentParams shear;
        shear.shear = 45;
        apply_assessment(in.data(), out.data(), 1, h, w, shear);
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
                const int sx = x + (y - 2);
                const float want = sx >= 0 && sx < w ? float(at(in, h, w, 0, y, sx)) : 0.0f;
                QVERIFY2(near(at(out, h, w, 0, y, x), want),
                         qPrintable(QString("shear at %1,%2").arg(y).arg(x)));
            }
        }
        // Scale 2: output (y, x) reads input (2 + (y - 2) / 2, 2 + (x - 2) / 2), bilinearly.
        AssessmentParams zoom;
        zoom.scale = 2;
        apply_assessment(in.data(), out.data(), 1, h, w, zoom);
        for (int y = 0; y < h; ++y) {
            for (int x = 0; x < w; ++x) {
                const double fy = 2 + (y - 2) / 2.0, fx = 2 + (x - 2) / 2.0;
                const int y0 = int(std::floor(fy)), x0 = int(std::floor(fx));
                const double wy = fy - y0, wx = fx - x0;
                auto px = [&](int yy, int xx) {
                    return yy < h && xx < w ? double(at(in, h, w, 0, yy, xx)) : 0.0;
                };
                const double want = (1 - wy) * ((1 - wx) * px(y0, x0) + wx * px(y0, x0 + 1)) +
                                    wy * ((1 - wx) * px(y0 + 1, x0) + wx * px(y0 + 1, x0 + 1));
                QVERIFY2(near(at(out, h, w, 0, y, x), float(want)),
                         qPrintable(QString("scale at %1,%2").arg(y).arg(x)));
            }
        }
    }

    // Brightness, contrast and saturation as torchvision's _blend, clamped to [0, 255].
    void assessmentColourJitter() {
        // 1 channel, 1 x 4: values 0, 100, 200, 250 (mean 137.5).
        const std::vector<std::uint8_t> grey_in{0, 100, 200, 250};
        std::vector<float> out(4);
        AssessmentParams bright;
        bright.brightness = 1.2;
        apply_assessment(grey_in.data(), out.data(), 1, 1, 4, bright);
        QCOMPARE(out, (std::vector<float>{0.0f, 120.0f, 240.0f, 255.0f}));  // 300 clamps
        AssessmentParams contrast;
        contrast.contrast = 0.8;
        apply_assessment(grey_in.data(), out.data(), 1, 1, 4, contrast);
        for (int k = 0; k < 4; ++k) {
            QVERIFY(std::abs(out[std::size_t(k)] -
                             float(0.8 * grey_in[std::size_t(k)] + 0.2 * 137.5)) < 1e-3f);
        }
        // 3 channels, one pixel (r, g, b) = (200, 100, 0): saturation 0 gives its grey.
        const std::vector<std::uint8_t> rgb{200, 100, 0};
        std::vector<float> out3(3);
        AssessmentParams desaturate;
        desaturate.saturation = 0;
        apply_assessment(rgb.data(), out3.data(), 3, 1, 1, desaturate);
        const float grey = float(0.2989 * 200 + 0.587 * 100);
        for (float v : out3) {
            QVERIFY(std::abs(v - grey) < 1e-3f);
        }
        // Saturation leaves a 1-channel image alone.
        apply_assessment(grey_in.data(), out.data(), 1, 1, 4, desaturate);
        QCOMPARE(out, (std::vector<float>{0.0f, 100.0f, 200.0f, 250.0f}));
    }

    // Random draws: deterministic per stream and within range; the outputs stay in [0, 255] (a
    // white image brightened must clamp) and a random image always changes.
    void assessmentDrawsInRangeAndChangeImages() {
        SplitMix64 a(augment_seed(1, 0, 0, 0)), b(augment_seed(1, 0, 0, 0));
        const int c = 3, h = 12, w = 12;
        const std::vector<std::uint8_t> white(std::size_t(c) * h * w, 255);
        std::vector<float> out(white.size());
        int flips = 0, changed = 0;
        for (int k = 0; k < 300; ++k) {
            const AssessmentParams p = draw_assessment(a);
            QVERIFY(same_params(p, draw_assessment(b)));
            QVERIFY(p.angle >= -10 && p.angle <= 10);
            QVERIFY(p.shear >= -10 && p.shear <= 10);
            QVERIFY(p.scale >= 0.8 && p.scale <= 1.2);
            for (double f : {p.brightness, p.contrast, p.saturation}) {
                QVERIFY(f >= 0.8 && f <= 1.2);
            }
            QCOMPARE(std::set<int>(p.order.begin(), p.order.end()), (std::set<int>{0, 1, 2}));
            flips += p.flip ? 1 : 0;

            const std::vector<std::uint8_t> in =
                k % 2 ? random_image(c, h, w, std::uint64_t(k)) : white;
            apply_assessment(in.data(), out.data(), c, h, w, p);
            bool differs = false;
            for (std::size_t i = 0; i < out.size(); ++i) {
                QVERIFY2(out[i] >= 0.0f && out[i] <= 255.0f, qPrintable(QString::number(out[i])));
                differs = differs || out[i] != float(in[i]);
            }
            changed += differs && k % 2 ? 1 : 0;
        }
        QVERIFY2(flips > 110 && flips < 190, qPrintable(QString::number(flips)));
        QCOMPARE(changed, 150);
    }
};

QTEST_APPLESS_MAIN(TestAugment)
#include "test_augment.moc"
