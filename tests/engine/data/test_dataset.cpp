// channel_statistics: per-channel mean and population std of pixels / 255.

#include <QtTest>

#include <cmath>

#include "data/dataset.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;

class TestDataset : public QObject {
    Q_OBJECT

  private slots:
    // Two 2-channel 1x2 images. Channel 0 holds 0, 255 | 255, 255 -> values 0, 1, 1, 1:
    // mean 3/4, variance 3/4 - 9/16 = 3/16. Channel 1 holds 51, 51 | 102, 0 -> 0.2, 0.2, 0.4,
    // 0: mean 0.2, variance (0 + 0 + 0.04 + 0.04) / 4 = 0.02.
    void handComputed() {
        Dataset d;
        d.channels = 2;
        d.height = 1;
        d.width = 2;
        d.images = {0, 255, 51, 51, 255, 255, 102, 0};
        d.labels = {0, 1};
        const Normalization n = channel_statistics(d);
        QCOMPARE(n.mean.size(), std::size_t(2));
        QCOMPARE(n.stddev.size(), std::size_t(2));
        QVERIFY(std::abs(n.mean[0] - 0.75f) < 1e-6f);
        QVERIFY(std::abs(n.stddev[0] - float(std::sqrt(3.0 / 16.0))) < 1e-6f);
        QVERIFY(std::abs(n.mean[1] - 0.2f) < 1e-6f);
        QVERIFY(std::abs(n.stddev[1] - float(std::sqrt(0.02))) < 1e-6f);
    }

    // Large counts: sums that would lose precision in float stay exact.
    void manyPixels() {
        Dataset d;
        d.channels = 1;
        d.height = 100;
        d.width = 100;
        for (int i = 0; i < 400; ++i) {
            d.images.insert(d.images.end(), 10000, std::uint8_t(i % 2 ? 200 : 100));
            d.labels.push_back(0);
        }
        const Normalization n = channel_statistics(d);
        QVERIFY(std::abs(n.mean[0] - float(150.0 / 255.0)) < 1e-6f);
        QVERIFY(std::abs(n.stddev[0] - float(50.0 / 255.0)) < 1e-6f);
    }

    // A constant channel has std 0; reporting 1 keeps the loader from dividing by zero.
    void constantChannel() {
        Dataset d;
        d.channels = 1;
        d.height = 2;
        d.width = 2;
        d.images = {9, 9, 9, 9};
        d.labels = {0};
        const Normalization n = channel_statistics(d);
        QVERIFY(std::abs(n.mean[0] - 9.0f / 255.0f) < 1e-6f);
        QCOMPARE(n.stddev[0], 1.0f);
    }

    void emptyIsAnError() {
        Dataset d;
        d.channels = 1;
        d.height = 2;
        d.width = 2;
        try {
            channel_statistics(d);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(int(e.kind()), int(ErrorKind::InvalidSpec));
        }
    }

    void emptyIsNamedWithWhatToChoose() {
        Dataset d;
        d.channels = 1;
        d.height = 2;
        d.width = 2;
        try {
            channel_statistics(d);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(QString::fromStdString(e.what()),
                     QString("cannot compute normalisation statistics of an empty training set; "
                             "choose a dataset with at least one training image"));
        }
    }
};

QTEST_APPLESS_MAIN(TestDataset)
#include "test_dataset.moc"
