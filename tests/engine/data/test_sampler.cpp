// EpochSampler: a permutation per epoch, split across ranks by interleaving, with the
// remainder dropped; deterministic in (seed, epoch).

#include <QtTest>

#include <algorithm>
#include <set>

#include "data/sampler.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;

class TestSampler : public QObject {
    Q_OBJECT

  private slots:
    void singleRankIsPermutation() {
        const EpochSampler s(1000, 5);
        QCOMPARE(s.per_rank(), std::size_t(1000));
        for (int epoch = 0; epoch < 3; ++epoch) {
            std::vector<std::uint32_t> idx = s.indices(epoch);
            QCOMPARE(idx.size(), std::size_t(1000));
            std::vector<std::uint32_t> sorted = idx;
            std::sort(sorted.begin(), sorted.end());
            for (std::uint32_t i = 0; i < 1000; ++i) {
                QCOMPARE(sorted[i], i);
            }
            // Shuffled: far from the identity.
            int fixed = 0;
            for (std::uint32_t i = 0; i < 1000; ++i) {
                fixed += idx[i] == i ? 1 : 0;
            }
            QVERIFY(fixed < 20);
        }
    }

    void ranksSplitThePermutation_data() {
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("ranks");
        QTest::newRow("10/2") << 10 << 2;
        QTest::newRow("10/3 remainder 1") << 10 << 3;
        QTest::newRow("1001/3 remainder 2") << 1001 << 3;
        QTest::newRow("7/7") << 7 << 7;
    }
    void ranksSplitThePermutation() {
        QFETCH(int, count);
        QFETCH(int, ranks);
        const std::uint64_t seed = 99;
        const std::size_t per_rank = std::size_t(count / ranks);
        for (int epoch = 0; epoch < 4; ++epoch) {
            // The single-rank order is the epoch's full permutation.
            const std::vector<std::uint32_t> full =
                EpochSampler(std::size_t(count), seed).indices(epoch);
            std::set<std::uint32_t> seen;
            for (int r = 0; r < ranks; ++r) {
                const EpochSampler s(std::size_t(count), seed, ranks, r);
                QCOMPARE(s.per_rank(), per_rank);
                const std::vector<std::uint32_t> mine = s.indices(epoch);
                QCOMPARE(mine.size(), per_rank);
                for (std::size_t k = 0; k < mine.size(); ++k) {
                    // Interleaved, as DistributedSampler: rank r takes r, r + ranks, ...
                    QCOMPARE(mine[k], full[std::size_t(r) + k * std::size_t(ranks)]);
                    QVERIFY2(seen.insert(mine[k]).second, "an index was given to two ranks");
                }
            }
            // Together every index once, except the last count % ranks of the permutation.
            QCOMPARE(seen.size(), per_rank * std::size_t(ranks));
            for (std::size_t k = per_rank * std::size_t(ranks); k < full.size(); ++k) {
                QVERIFY(!seen.count(full[k]));
            }
        }
    }

    // With a remainder, which samples sit out changes with the epoch's shuffle.
    void droppedSamplesVaryByEpoch() {
        std::set<std::uint32_t> dropped;
        for (int epoch = 0; epoch < 20; ++epoch) {
            dropped.insert(EpochSampler(10, 1).indices(epoch).back());  // 10 % 3 == 1 dropped
        }
        QVERIFY(dropped.size() > 3);
    }

    void epochsDifferSeedsRepeat() {
        const EpochSampler a(500, 11), b(500, 11), c(500, 12);
        QVERIFY(a.indices(0) == b.indices(0));
        QVERIFY(a.indices(7) == b.indices(7));
        QVERIFY(a.indices(0) != a.indices(1));
        QVERIFY(a.indices(1) != a.indices(2));
        QVERIFY(a.indices(0) != c.indices(0));
        // A pure function: asking again, or in another order, changes nothing.
        const std::vector<std::uint32_t> e3 = a.indices(3);
        a.indices(4);
        QVERIFY(a.indices(3) == e3);
    }

    // Fisher-Yates with an unbiased bounded draw: each index lands in each position about
    // equally often (4000 epochs, expected 1000 per cell, sd ~27; allow 5 sd).
    void shuffleIsUniform() {
        const EpochSampler s(4, 3);
        int counts[4][4] = {};
        for (int epoch = 0; epoch < 4000; ++epoch) {
            const std::vector<std::uint32_t> idx = s.indices(epoch);
            for (int pos = 0; pos < 4; ++pos) {
                ++counts[idx[std::size_t(pos)]][pos];
            }
        }
        for (auto& row : counts) {
            for (int n : row) {
                QVERIFY2(std::abs(n - 1000) < 140, qPrintable(QString::number(n)));
            }
        }
    }

    void invalidArguments() {
        auto kind = [](auto f) {
            try {
                f();
            } catch (const Error& e) {
                return int(e.kind());
            }
            return -1;
        };
        const int invalid = int(ErrorKind::InvalidSpec);
        QCOMPARE(kind([] { EpochSampler(10, 0, 0, 0); }), invalid);
        QCOMPARE(kind([] { EpochSampler(10, 0, 2, 2); }), invalid);
        QCOMPARE(kind([] { EpochSampler(10, 0, 2, -1); }), invalid);
        QCOMPARE(kind([] { EpochSampler(3, 0, 4, 0); }), invalid);
        QCOMPARE(kind([] { EpochSampler(0, 0); }), invalid);
        QCOMPARE(kind([] { EpochSampler(4, 0, 4, 3); }), -1);
    }

    // What each refusal says (docs/errors.md, E-DATA-GUARDS).
    void invalidArgumentsAreNamed() {
        auto message = [](auto f) -> QString {
            try {
                f();
            } catch (const Error& e) {
                return QString::fromStdString(e.what());
            }
            return {};
        };
        QCOMPARE(message([] { EpochSampler(10, 0, 2, 2); }),
                 QString("sampler: rank 2 of 2 devices is not a valid device"));
        QCOMPARE(message([] { EpochSampler(3, 0, 4, 0); }),
                 QString("a dataset of 3 images cannot be split across 4 devices; use fewer "
                         "devices or more images"));
        QCOMPARE(message([] { EpochSampler(std::size_t(1) << 33, 0); }),
                 QString("a dataset of 8589934592 images is too large; at most 2^32 - 1 are "
                         "supported"));
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
