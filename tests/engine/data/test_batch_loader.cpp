// BatchLoader: batch counts, normalisation, delivery of every sample once and in order,
// deterministic augmentation, epoch restarts mid-epoch, and shutdown mid-epoch.

#include <QElapsedTimer>
#include <QtTest>

#include <chrono>
#include <cmath>
#include <numeric>
#include <set>
#include <thread>
#include <tuple>

#include "data/batch_loader.h"
#include "data/rng.h"
#include "data/sampler.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;

namespace {

// A 1-channel 2x2 dataset whose pixels spell the sample's index: (index & 255, index >> 8, 0,
// 7); label index % 10.
Dataset indexed_dataset(int count) {
    Dataset d;
    d.channels = 1;
    d.height = 2;
    d.width = 2;
    for (int i = 0; i < count; ++i) {
        d.images.insert(d.images.end(), {std::uint8_t(i & 255), std::uint8_t(i >> 8), 0, 7});
        d.labels.push_back(std::uint8_t(i % 10));
    }
    return d;
}

// Normalisation that maps pixel v to v itself: mean 0, stddev 1/255.
Normalization identity(int channels) {
    return Normalization{std::vector<float>(std::size_t(channels), 0.0f),
                         std::vector<float>(std::size_t(channels), float(1.0 / 255.0))};
}

// The sample index a batch row of indexed_dataset spells.
int decode(const Batch& b, int row) {
    const float* p = b.images.data() + std::size_t(row) * 4;
    return int(std::lround(p[0])) + 256 * int(std::lround(p[1]));
}

std::vector<std::uint32_t> iota(std::size_t n) {
    std::vector<std::uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0u);
    return v;
}

// Drains an epoch; returns the decoded sample indices in delivery order and checks labels.
std::vector<int> drain(BatchLoader& loader, std::vector<int>* sizes = nullptr) {
    std::vector<int> seen;
    while (const Batch* b = loader.next()) {
        if (sizes) {
            sizes->push_back(b->size);
        }
        if (b->images.size() != std::size_t(b->size) * 4 ||
            b->labels.size() != std::size_t(b->size)) {
            qWarning("batch buffers do not match its size");
            return {};
        }
        for (int r = 0; r < b->size; ++r) {
            const int i = decode(*b, r);
            if (b->labels[std::size_t(r)] != i % 10) {
                qWarning("label of sample %d is %d", i, b->labels[std::size_t(r)]);
                return {};
            }
            seen.push_back(i);
        }
    }
    return seen;
}

// A 1-channel 8x8 image with distinct values 1..64 (0 is the padding value), so that the
// crop offset and flip of an augmented copy can be read back from it.
Dataset distinct_pixels_dataset(int count) {
    Dataset d;
    d.channels = 1;
    d.height = 8;
    d.width = 8;
    for (int i = 0; i < count; ++i) {
        for (int p = 0; p < 64; ++p) {
            d.images.push_back(std::uint8_t(1 + p));
        }
        d.labels.push_back(0);
    }
    return d;
}

struct Transform {
    int dx = 0, dy = 0;
    bool flip = false;
    bool operator<(const Transform& o) const {
        return std::tie(dx, dy, flip) < std::tie(o.dx, o.dy, o.flip);
    }
};

// Finds the (dx, dy, flip) that explains an augmented 8x8 image exactly; false if none does.
bool explain(const float* img, Transform* found) {
    for (int flip = 0; flip < 2; ++flip) {
        for (int dy = -4; dy <= 4; ++dy) {
            for (int dx = -4; dx <= 4; ++dx) {
                bool ok = true;
                for (int y = 0; y < 8 && ok; ++y) {
                    for (int x = 0; x < 8 && ok; ++x) {
                        const int sy = y + dy, sx = (flip ? 7 - x : x) + dx;
                        const int want =
                            (sy < 0 || sy > 7 || sx < 0 || sx > 7) ? 0 : 1 + sy * 8 + sx;
                        ok = std::lround(img[y * 8 + x]) == want;
                    }
                }
                if (ok) {
                    *found = Transform{dx, dy, flip != 0};
                    return true;
                }
            }
        }
    }
    return false;
}

}  // namespace

class TestBatchLoader : public QObject {
    Q_OBJECT

  private slots:
    void batchCountAndPartialLast() {
        const Dataset d = indexed_dataset(10);
        LoaderConfig cfg;
        cfg.batch = 4;
        BatchLoader loader(d, identity(1), cfg);
        QCOMPARE(loader.batches_per_epoch(), 0);
        QVERIFY(loader.next() == nullptr);  // no epoch started
        loader.start_epoch(iota(10), 0);
        QCOMPARE(loader.batches_per_epoch(), 3);
        std::vector<int> sizes;
        const std::vector<int> seen = drain(loader, &sizes);
        QCOMPARE(sizes, (std::vector<int>{4, 4, 2}));
        QCOMPARE(seen.size(), std::size_t(10));
        QVERIFY(loader.next() == nullptr);  // stays at the end
        QVERIFY(loader.next() == nullptr);

        cfg.drop_last = true;
        BatchLoader dropping(d, identity(1), cfg);
        dropping.start_epoch(iota(10), 0);
        QCOMPARE(dropping.batches_per_epoch(), 2);
        sizes.clear();
        drain(dropping, &sizes);
        QCOMPARE(sizes, (std::vector<int>{4, 4}));

        QCOMPARE(batch_count(12, 4, false), 3);
        QCOMPARE(batch_count(12, 4, true), 3);
        QCOMPARE(batch_count(13, 4, false), 4);
        QCOMPARE(batch_count(3, 4, true), 0);
        QCOMPARE(batch_count(0, 4, false), 0);
    }

    void emptyEpoch() {
        const Dataset d = indexed_dataset(5);
        BatchLoader loader(d, identity(1), LoaderConfig{});
        loader.start_epoch({}, 0);
        QCOMPARE(loader.batches_per_epoch(), 0);
        QVERIFY(loader.next() == nullptr);
    }

    // Two channels with different statistics: checks both the formula and the NCHW layout.
    void normalisationValues() {
        Dataset d;
        d.channels = 2;
        d.height = 1;
        d.width = 3;
        d.images = {0, 128, 255, 10,  20,  30,   // sample 0: channel 0, channel 1
                    1, 2,   3,   200, 100, 50};  // sample 1
        d.labels = {4, 9};
        const Normalization norm{{0.5f, 0.25f}, {0.2f, 0.125f}};
        LoaderConfig cfg;
        cfg.batch = 2;
        BatchLoader loader(d, norm, cfg);
        loader.start_epoch({1, 0}, 0);
        const Batch* b = loader.next();
        QVERIFY(b != nullptr);
        QCOMPARE(b->size, 2);
        QCOMPARE(b->labels, (std::vector<std::int32_t>{9, 4}));
        QCOMPARE(b->images.size(), std::size_t(12));
        const std::uint8_t order[12] = {1, 2, 3, 200, 100, 50, 0, 128, 255, 10, 20, 30};
        for (int k = 0; k < 12; ++k) {
            const int c = (k / 3) % 2;
            const double want =
                (order[k] / 255.0 - norm.mean[std::size_t(c)]) / norm.stddev[std::size_t(c)];
            QVERIFY2(std::abs(b->images[std::size_t(k)] - want) < 1e-5,
                     qPrintable(QString("element %1: %2 vs %3")
                                    .arg(k)
                                    .arg(b->images[std::size_t(k)])
                                    .arg(want)));
        }
        QVERIFY(loader.next() == nullptr);
    }

    // Each epoch of a sampler's indices comes out exactly once, in the sampler's order; the
    // evaluation pattern (0..n-1 in order) comes out in order.
    void everySampleOnceInOrder() {
        const Dataset d = indexed_dataset(1000);
        LoaderConfig cfg;
        cfg.batch = 64;
        cfg.prefetch = 3;
        BatchLoader loader(d, identity(1), cfg);
        const EpochSampler sampler(1000, 17);
        for (int epoch = 0; epoch < 3; ++epoch) {
            const std::vector<std::uint32_t> idx = sampler.indices(epoch);
            loader.start_epoch(idx, epoch);
            const std::vector<int> seen = drain(loader);
            QCOMPARE(seen.size(), idx.size());
            for (std::size_t k = 0; k < idx.size(); ++k) {
                QCOMPARE(seen[k], int(idx[k]));
            }
        }
        loader.start_epoch(iota(1000), 0);
        const std::vector<int> seen = drain(loader);
        QCOMPARE(seen.size(), std::size_t(1000));
        for (int i = 0; i < 1000; ++i) {
            QCOMPARE(seen[std::size_t(i)], i);
        }
    }

    // The batch handed out stays intact while the producer works ahead.
    void batchStaysValidUntilNext() {
        const Dataset d = indexed_dataset(600);
        LoaderConfig cfg;
        cfg.batch = 10;
        cfg.prefetch = 1;
        BatchLoader loader(d, identity(1), cfg);
        loader.start_epoch(iota(600), 0);
        int expected = 0;
        while (const Batch* b = loader.next()) {
            const std::vector<float> copy = b->images;
            if (expected % 100 == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(5));  // let it run ahead
            }
            QVERIFY(b->images == copy);
            QCOMPARE(decode(*b, 0), expected);
            expected += b->size;
        }
        QCOMPARE(expected, 600);
    }

    void restartMidEpoch() {
        const Dataset d = indexed_dataset(500);
        LoaderConfig cfg;
        cfg.batch = 8;
        BatchLoader loader(d, identity(1), cfg);
        std::vector<std::uint32_t> first = iota(500);
        loader.start_epoch(first, 0);
        QVERIFY(loader.next() != nullptr);
        QVERIFY(loader.next() != nullptr);
        // The rest of epoch 0 is discarded; epoch 1 starts from its first index.
        std::vector<std::uint32_t> second(first.rbegin(), first.rend());
        second.resize(100);
        loader.start_epoch(second, 1);
        QCOMPARE(loader.batches_per_epoch(), 13);
        const std::vector<int> seen = drain(loader);
        QCOMPARE(seen.size(), std::size_t(100));
        for (std::size_t k = 0; k < 100; ++k) {
            QCOMPARE(seen[k], int(second[k]));
        }
        // Many quick restarts in a row, each consumed a little, then one full epoch.
        for (int r = 0; r < 200; ++r) {
            loader.start_epoch(iota(500), r);
            for (int k = 0; k < r % 4; ++k) {
                QVERIFY(loader.next() != nullptr);
            }
        }
        const std::vector<int> last = drain(loader);
        QCOMPARE(last.size(), std::size_t(500 - 8 * (199 % 4)));
        QCOMPARE(last.front(), 8 * (199 % 4));
    }

    void augmentationDeterministicAndCorrect() {
        const Dataset d = distinct_pixels_dataset(300);
        const Normalization norm = identity(1);
        LoaderConfig cfg;
        cfg.batch = 32;
        cfg.augment = AugmentMode::CropFlip;
        cfg.seed = 5;
        auto epoch_images = [&](const std::vector<std::uint32_t>& idx, int epoch,
                                std::uint64_t seed, int rank = 0) {
            LoaderConfig c = cfg;
            c.seed = seed;
            c.rank = rank;
            BatchLoader loader(d, norm, c);
            loader.start_epoch(idx, epoch);
            std::vector<float> all;
            while (const Batch* b = loader.next()) {
                all.insert(all.end(), b->images.begin(), b->images.end());
            }
            return all;
        };
        const std::vector<float> a = epoch_images(iota(300), 0, 5);
        QCOMPARE(a.size(), std::size_t(300 * 64));
        QVERIFY(a == epoch_images(iota(300), 0, 5));     // same seed and epoch: identical
        QVERIFY(a != epoch_images(iota(300), 1, 5));     // another epoch: different
        QVERIFY(a != epoch_images(iota(300), 0, 6));     // another seed: different
        QVERIFY(a != epoch_images(iota(300), 0, 5, 1));  // another rank: different
        QVERIFY(epoch_images(iota(300), 2, 5, 3) == epoch_images(iota(300), 2, 5, 3));

        // A sample's augmentation depends on (seed, rank, epoch, sample), not on where it sits in
        // the epoch or the batch: reversed order gives the reversed images.
        std::vector<std::uint32_t> reversed = iota(300);
        std::reverse(reversed.begin(), reversed.end());
        const std::vector<float> r = epoch_images(reversed, 0, 5);
        for (int i = 0; i < 300; ++i) {
            QVERIFY(std::equal(a.begin() + i * 64, a.begin() + (i + 1) * 64,
                               r.begin() + (299 - i) * 64));
        }

        // Every output is a crop (offsets -4..4, zero padding) with or without a flip, and over
        // 300 samples all offsets and both flips occur.
        std::set<int> dxs, dys;
        int flips = 0;
        for (int i = 0; i < 300; ++i) {
            Transform t;
            QVERIFY2(explain(a.data() + i * 64, &t), qPrintable(QString("sample %1").arg(i)));
            dxs.insert(t.dx);
            dys.insert(t.dy);
            flips += t.flip ? 1 : 0;
        }
        QCOMPARE(int(dxs.size()), 9);
        QCOMPARE(int(dys.size()), 9);
        QVERIFY2(flips > 100 && flips < 200, qPrintable(QString::number(flips)));
    }

    // Every mode: deterministic for a given (seed, rank, epoch), different across ranks and
    // epochs, the batch shaped as without augmentation; flip only mirrors; the assessment's
    // pixel values (identity normalisation) stay in [0, 255] and change every image.
    void everyModeDeterministicPerSeedRankEpoch() {
        const int count = 200, c = 3, h = 8, w = 8;
        Dataset d;
        d.channels = c;
        d.height = h;
        d.width = w;
        SplitMix64 bytes(99);
        for (int i = 0; i < count * c * h * w; ++i) {
            d.images.push_back(std::uint8_t(bytes.below(256)));
        }
        d.labels.assign(std::size_t(count), 1);
        const std::size_t image = d.image_size();
        for (const AugmentMode mode :
             {AugmentMode::Flip, AugmentMode::CropFlip, AugmentMode::Assessment}) {
            const QString name = QString("mode %1").arg(int(mode));
            auto run = [&](int epoch, int rank) {
                LoaderConfig cfg;
                cfg.batch = 48;
                cfg.augment = mode;
                cfg.seed = 21;
                cfg.rank = rank;
                BatchLoader loader(d, identity(c), cfg);
                loader.start_epoch(iota(std::size_t(count)), epoch);
                std::vector<float> all;
                while (const Batch* b = loader.next()) {
                    if (b->images.size() != std::size_t(b->size) * image) {
                        return std::vector<float>{};
                    }
                    all.insert(all.end(), b->images.begin(), b->images.end());
                }
                return all;
            };
            const std::vector<float> base = run(1, 0);
            QVERIFY2(base.size() == std::size_t(count) * image, qPrintable(name));
            QVERIFY2(base == run(1, 0), qPrintable(name));
            QVERIFY2(run(4, 2) == run(4, 2), qPrintable(name));
            QVERIFY2(base != run(1, 1), qPrintable(name));  // another rank
            QVERIFY2(base != run(2, 0), qPrintable(name));  // another epoch

            int unchanged = 0, mirrored = 0;
            for (int i = 0; i < count; ++i) {
                const std::uint8_t* src = d.images.data() + std::size_t(i) * image;
                const float* out = base.data() + std::size_t(i) * image;
                bool same = true, mirror = true;
                for (int ch = 0; ch < c; ++ch) {
                    for (int y = 0; y < h; ++y) {
                        for (int x = 0; x < w; ++x) {
                            const std::size_t o = (std::size_t(ch) * h + y) * w;
                            const long v = std::lround(out[o + std::size_t(x)]);
                            same = same && v == src[o + std::size_t(x)];
                            mirror = mirror && v == src[o + std::size_t(w - 1 - x)];
                            if (mode == AugmentMode::Assessment) {
                                QVERIFY2(out[o + std::size_t(x)] > -1e-3f &&
                                             out[o + std::size_t(x)] < 255.001f,
                                         qPrintable(name));
                            }
                        }
                    }
                }
                unchanged += same ? 1 : 0;
                mirrored += mirror ? 1 : 0;
            }
            if (mode == AugmentMode::Flip) {  // each image mirrored or not, both often
                QCOMPARE(unchanged + mirrored, count);
                QVERIFY2(mirrored > 60 && mirrored < 140, qPrintable(QString::number(mirrored)));
            } else {  // none left untouched (a crop of (0, 0) unflipped is 1 in 162)
                QVERIFY2(unchanged <= (mode == AugmentMode::CropFlip ? 6 : 0),
                         qPrintable(name + QString(": %1 unchanged").arg(unchanged)));
            }
        }
    }

    void noAugmentationIsExact() {
        const Dataset d = distinct_pixels_dataset(3);
        BatchLoader loader(d, identity(1), LoaderConfig{});
        loader.start_epoch({0, 1, 2}, 4);
        const Batch* b = loader.next();
        QVERIFY(b != nullptr);
        Transform t;
        QVERIFY(explain(b->images.data(), &t));
        QCOMPARE(t.dx, 0);
        QCOMPARE(t.dy, 0);
        QCOMPARE(t.flip, false);
    }

    void destroyMidEpochDoesNotHang() {
        const Dataset d = indexed_dataset(20000);
        QElapsedTimer timer;
        timer.start();
        for (int round = 0; round < 50; ++round) {
            LoaderConfig cfg;
            cfg.batch = 16;
            cfg.prefetch = 1 + round % 3;
            BatchLoader loader(d, identity(1), cfg);
            loader.start_epoch(iota(20000), round);
            for (int k = 0; k < round % 5; ++k) {
                QVERIFY(loader.next() != nullptr);
            }
        }  // each destructor runs with the producer busy or blocked on a full ring
        { BatchLoader never_started(d, identity(1), LoaderConfig{}); }
        QVERIFY2(timer.elapsed() < 20000, "destroying loaders took too long");
    }

    void invalidArguments() {
        const Dataset d = indexed_dataset(5);
        auto kind = [](auto f) {
            try {
                f();
            } catch (const Error& e) {
                return int(e.kind());
            }
            return -1;
        };
        LoaderConfig zero_batch;
        zero_batch.batch = 0;
        QCOMPARE(kind([&] { BatchLoader(d, identity(1), zero_batch); }),
                 int(ErrorKind::InvalidSpec));
        LoaderConfig zero_prefetch;
        zero_prefetch.prefetch = 0;
        QCOMPARE(kind([&] { BatchLoader(d, identity(1), zero_prefetch); }),
                 int(ErrorKind::InvalidSpec));
        QCOMPARE(kind([&] { BatchLoader(d, identity(3), LoaderConfig{}); }),
                 int(ErrorKind::Internal));
        QCOMPARE(kind([&] {
                     BatchLoader(d, Normalization{{0.f}, {0.f}}, LoaderConfig{});
                 }),
                 int(ErrorKind::Internal));
        BatchLoader loader(d, identity(1), LoaderConfig{});
        QCOMPARE(kind([&] { loader.start_epoch({0, 5}, 0); }), int(ErrorKind::Internal));
    }

    // What each refusal a user could meet says (docs/errors.md, E-DATA-GUARDS).
    void invalidArgumentsAreNamed() {
        const Dataset d = indexed_dataset(5);
        auto message = [&](LoaderConfig config) -> QString {
            try {
                BatchLoader loader(d, identity(1), config);
            } catch (const Error& e) {
                return QString::fromStdString(e.what());
            }
            return {};
        };
        LoaderConfig zero_batch;
        zero_batch.batch = 0;
        QCOMPARE(message(zero_batch), QString("the batch size must be at least 1 (it is 0)"));
        LoaderConfig zero_prefetch;
        zero_prefetch.prefetch = 0;
        QCOMPARE(message(zero_prefetch),
                 QString("the loader's prefetch depth must be at least 1 (it is 0)"));
    }
};

QTEST_APPLESS_MAIN(TestBatchLoader)
#include "test_batch_loader.moc"
