// Synthetic dataset: determinism, class balance, valid geometry, errors, and that it can be
// learned (a softmax regression trained here for one epoch beats chance by far).

#include <zlib.h>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <functional>

#include "data/synthetic.h"
#include "error.h"

using namespace scalelab;
using namespace scalelab::data;

namespace {

std::uint32_t crc(const std::vector<std::uint8_t>& b) {
    return std::uint32_t(crc32(crc32(0, nullptr, 0), b.data(), uInt(b.size())));
}

// One epoch of plain SGD on a linear softmax classifier over pixels/255; returns the test
// accuracy. Independent of engine/nn on purpose: this tests the data, not the models.
double softmax_regression_accuracy(const TrainTest& tt) {
    const std::size_t dim = tt.train.image_size();
    const int classes = tt.train.classes;
    std::vector<double> w(std::size_t(classes) * dim, 0.0), b(std::size_t(classes), 0.0);
    std::vector<double> logits(static_cast<std::size_t>(classes)), x(dim);
    const double lr = 0.01;
    auto forward = [&](const Dataset& d, std::size_t i) {
        for (std::size_t k = 0; k < dim; ++k) {
            x[k] = d.images[i * dim + k] / 255.0;
        }
        for (int c = 0; c < classes; ++c) {
            double s = b[std::size_t(c)];
            const double* wc = w.data() + std::size_t(c) * dim;
            for (std::size_t k = 0; k < dim; ++k) {
                s += wc[k] * x[k];
            }
            logits[std::size_t(c)] = s;
        }
    };
    for (std::size_t i = 0; i < tt.train.count(); ++i) {
        forward(tt.train, i);
        double mx = logits[0];
        for (double l : logits) {
            mx = std::max(mx, l);
        }
        double z = 0;
        for (double& l : logits) {
            l = std::exp(l - mx);
            z += l;
        }
        for (int c = 0; c < classes; ++c) {
            const double g = logits[std::size_t(c)] / z - (c == tt.train.labels[i] ? 1.0 : 0.0);
            double* wc = w.data() + std::size_t(c) * dim;
            for (std::size_t k = 0; k < dim; ++k) {
                wc[k] -= lr * g * x[k];
            }
            b[std::size_t(c)] -= lr * g;
        }
    }
    std::size_t correct = 0;
    for (std::size_t i = 0; i < tt.test.count(); ++i) {
        forward(tt.test, i);
        int best = 0;
        for (int c = 1; c < classes; ++c) {
            if (logits[std::size_t(c)] > logits[std::size_t(best)]) {
                best = c;
            }
        }
        correct += best == tt.test.labels[i] ? 1 : 0;
    }
    return double(correct) / double(tt.test.count());
}

}  // namespace

class TestSynthetic : public QObject {
    Q_OBJECT

  private slots:
    void geometry() {
        SyntheticConfig c;
        c.train = 100;
        c.test = 30;
        c.channels = 3;
        c.size = 32;
        c.classes = 7;
        const TrainTest tt = make_synthetic(c);
        for (const Dataset* d : {&tt.train, &tt.test}) {
            QCOMPARE(d->channels, 3);
            QCOMPARE(d->height, 32);
            QCOMPARE(d->width, 32);
            QCOMPARE(d->classes, 7);
            QCOMPARE(d->images.size(), d->count() * 3 * 32 * 32);
            for (std::uint8_t l : d->labels) {
                QVERIFY(l < 7);
            }
        }
        QCOMPARE(tt.train.count(), std::size_t(100));
        QCOMPARE(tt.test.count(), std::size_t(30));
    }

    void deterministic() {
        SyntheticConfig c;
        c.train = 500;
        c.test = 100;
        c.seed = 42;
        const TrainTest a = make_synthetic(c);
        const TrainTest b = make_synthetic(c);
        QVERIFY(a.train.images == b.train.images);
        QVERIFY(a.train.labels == b.train.labels);
        QVERIFY(a.test.images == b.test.images);
        QVERIFY(a.test.labels == b.test.labels);

        c.seed = 43;
        const TrainTest other = make_synthetic(c);
        QVERIFY(other.train.images != a.train.images);
        QVERIFY(other.train.labels != a.train.labels);
        // Train and test are different draws, not copies.
        QVERIFY(!std::equal(a.test.images.begin(), a.test.images.end(), a.train.images.begin()));
    }

    // Each split has its own stream: the test set depends on the seed, the geometry and its
    // own size, not on how many training images are drawn.
    void testSetIndependentOfTrainSize() {
        SyntheticConfig c;
        c.train = 200;
        c.test = 50;
        const TrainTest a = make_synthetic(c);
        c.train = 300;
        const TrainTest b = make_synthetic(c);
        QVERIFY(a.test.images == b.test.images);
        QVERIFY(a.test.labels == b.test.labels);
    }

    // Guards "same bytes on every machine": the generator uses integer arithmetic only, so this
    // checksum holds on every platform. If it changes, recorded synthetic runs no longer
    // replay; change the generator only on purpose and update the value.
    void goldenChecksum() {
        SyntheticConfig c;
        c.train = 64;
        c.test = 16;
        c.channels = 3;
        c.size = 16;
        c.classes = 5;
        c.seed = 7;
        const TrainTest tt = make_synthetic(c);
        const std::uint32_t images = crc(tt.train.images), labels = crc(tt.train.labels);
        qInfo("train images crc32 0x%08x, labels crc32 0x%08x", images, labels);
        QCOMPARE(images, 0x70fcbb16u);
        QCOMPARE(labels, 0x08fa5890u);
    }

    void classBalance_data() {
        QTest::addColumn<int>("count");
        QTest::addColumn<int>("classes");
        QTest::newRow("8192/10") << 8192 << 10;
        QTest::newRow("1000/7") << 1000 << 7;
        QTest::newRow("5/10") << 5 << 10;
    }
    void classBalance() {
        QFETCH(int, count);
        QFETCH(int, classes);
        SyntheticConfig c;
        c.train = count;
        c.test = count;
        c.classes = classes;
        c.size = 8;
        const TrainTest tt = make_synthetic(c);
        for (const Dataset* d : {&tt.train, &tt.test}) {
            std::vector<int> per_class(std::size_t(classes), 0);
            for (std::uint8_t l : d->labels) {
                ++per_class[l];
            }
            const auto [lo, hi] = std::minmax_element(per_class.begin(), per_class.end());
            QVERIFY2(*hi - *lo <= 1, qPrintable(QString("classes %1..%2").arg(*lo).arg(*hi)));
            QCOMPARE(*hi, (count + classes - 1) / classes);
        }
        // Shuffled, not 0,1,2,...: the first `classes` labels are not simply in order.
        if (count >= 100) {
            bool in_order = true;
            for (int i = 0; i < 20; ++i) {
                in_order = in_order && tt.train.labels[std::size_t(i)] == i % classes;
            }
            QVERIFY(!in_order);
        }
    }

    // Images are neither blank nor saturated noise: classes differ in their mean images much
    // more than samples of one class differ from their class mean.
    void classesAreDistinct() {
        SyntheticConfig c;
        c.train = 2000;
        c.test = 10;
        const TrainTest tt = make_synthetic(c);
        const std::size_t dim = tt.train.image_size();
        std::vector<double> mean(10 * dim, 0.0);
        std::vector<int> n(10, 0);
        for (std::size_t i = 0; i < tt.train.count(); ++i) {
            const int l = tt.train.labels[i];
            ++n[std::size_t(l)];
            for (std::size_t k = 0; k < dim; ++k) {
                mean[std::size_t(l) * dim + k] += tt.train.images[i * dim + k];
            }
        }
        for (int l = 0; l < 10; ++l) {
            for (std::size_t k = 0; k < dim; ++k) {
                mean[std::size_t(l) * dim + k] /= n[std::size_t(l)];
            }
        }
        double min_between = 1e300;
        for (int a = 0; a < 10; ++a) {
            for (int b = a + 1; b < 10; ++b) {
                double d = 0;
                for (std::size_t k = 0; k < dim; ++k) {
                    const double diff =
                        mean[std::size_t(a) * dim + k] - mean[std::size_t(b) * dim + k];
                    d += diff * diff;
                }
                min_between = std::min(min_between, std::sqrt(d));
            }
        }
        qInfo("smallest distance between class means: %.1f", min_between);
        QVERIFY(min_between > 200.0);  // in pixel units over 784 pixels
    }

    void learnableInOneEpoch() {
        SyntheticConfig c;  // the defaults: 8192 train, 2048 test, 1x28x28, 10 classes
        const TrainTest tt = make_synthetic(c);
        const double acc = softmax_regression_accuracy(tt);
        qInfo("softmax regression, one epoch: test accuracy %.3f (chance 0.1)", acc);
        QVERIFY2(acc > 0.5, qPrintable(QString::number(acc)));
    }

    void invalidConfig_data() {
        QTest::addColumn<int>("train");
        QTest::addColumn<int>("channels");
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("classes");
        QTest::addColumn<QString>("field");
        QTest::newRow("train 0") << 0 << 1 << 28 << 10 << "training set";
        QTest::newRow("channels 0") << 10 << 0 << 28 << 10 << "channels";
        QTest::newRow("size 4") << 10 << 1 << 4 << 10 << "image size";
        QTest::newRow("classes 1") << 10 << 1 << 28 << 1 << "classes";
        QTest::newRow("classes 300") << 10 << 1 << 28 << 300 << "classes";
        QTest::newRow("too big") << 2000000000 << 3 << 512 << 10 << "GiB";
    }
    void invalidConfig() {
        QFETCH(int, train);
        QFETCH(int, channels);
        QFETCH(int, size);
        QFETCH(int, classes);
        QFETCH(QString, field);
        SyntheticConfig c;
        c.train = train;
        c.channels = channels;
        c.size = size;
        c.classes = classes;
        try {
            make_synthetic(c);
            QFAIL("no error");
        } catch (const Error& e) {
            QCOMPARE(int(e.kind()), int(ErrorKind::InvalidSpec));
            QVERIFY2(QString(e.what()).contains(field), e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestSynthetic)
#include "test_synthetic.moc"
