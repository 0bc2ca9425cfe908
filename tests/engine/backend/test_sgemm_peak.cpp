// measure_sgemm_peak: a positive, finite rate for a small matrix, and typed errors that say
// what to change for arguments out of range.

#include <QTest>

#include <cmath>
#include <string>

#include "backend/cpu/sgemm_peak.h"
#include "error.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::cpu::measure_sgemm_peak;
using scalelab::cpu::SgemmPeak;

class TestSgemmPeak : public QObject {
    Q_OBJECT

  private slots:
    void small_matrix_gives_a_positive_finite_rate() {
        const SgemmPeak peak = measure_sgemm_peak(1, 64, 3);
        QCOMPARE(peak.threads, 1);
        QCOMPARE(peak.size, 64);
        QVERIFY(std::isfinite(peak.gflops_median) && peak.gflops_median > 0.0);
        QVERIFY(std::isfinite(peak.gflops_max) && peak.gflops_max >= peak.gflops_median);
    }

    void bad_arguments_are_invalid_spec_data() {
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("repeats");
        QTest::addColumn<QString>("message");
        QTest::newRow("threads 0") << 0 << 64 << 1 << "threads";
        QTest::newRow("size 15") << 1 << 15 << 1 << "size";
        QTest::newRow("size 8193") << 1 << 8193 << 1 << "size";
        QTest::newRow("repeats 0") << 1 << 64 << 0 << "repeats";
    }
    void bad_arguments_are_invalid_spec() {
        QFETCH(int, threads);
        QFETCH(int, size);
        QFETCH(int, repeats);
        QFETCH(QString, message);
        try {
            measure_sgemm_peak(threads, size, repeats);
            QFAIL("no error thrown");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
            QVERIFY2(std::string(error.what()).find(message.toStdString()) != std::string::npos,
                     error.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestSgemmPeak)
#include "test_sgemm_peak.moc"
