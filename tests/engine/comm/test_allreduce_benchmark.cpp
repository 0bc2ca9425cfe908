#include <QtTest>

#include <cstddef>
#include <vector>

#include "comm/allreduce_benchmark.h"
#include "error.h"
#include "sanitizers.h"

using namespace scalelab;
using namespace scalelab::comm;

class TestAllReduceBenchmark : public QObject {
    Q_OBJECT

  private slots:
    void one_row_per_size_with_the_nccl_tests_bandwidths() {
        for (int devices : {1, 2, 3}) {
            const std::vector<AllReduceRow> rows =
                run_allreduce_benchmark(devices, {4096, 1 << 20, 1001}, 3);
            QCOMPARE(rows.size(), std::size_t{3});
            QCOMPARE(rows[0].bytes, std::size_t{4096});
            QCOMPARE(rows[1].bytes, std::size_t{1} << 20);
            QCOMPARE(rows[2].bytes, std::size_t{1000});  // whole floats
            for (const AllReduceRow& row : rows) {
                QCOMPARE(row.devices, devices);
                QVERIFY(row.time_ms > 0);
                QVERIFY(qFuzzyCompare(row.algbw_GBs,
                                      static_cast<double>(row.bytes) / (row.time_ms * 1e-3) / 1e9));
                QVERIFY(qFuzzyCompare(1.0 + row.busbw_GBs,
                                      1.0 + row.algbw_GBs * 2.0 * (devices - 1) / devices));
            }
        }
    }

    void bad_arguments_are_invalid_spec() {
        const auto kind_of = [](auto&& call) {
            try {
                call();
            } catch (const Error& error) {
                return error.kind();
            }
            return ErrorKind::Internal;
        };
        QCOMPARE(kind_of([] { run_allreduce_benchmark(0, {1024}, 1); }), ErrorKind::InvalidSpec);
        QCOMPARE(kind_of([] { run_allreduce_benchmark(17, {1024}, 1); }), ErrorKind::InvalidSpec);
        QCOMPARE(kind_of([] { run_allreduce_benchmark(2, {1024}, 0); }), ErrorKind::InvalidSpec);
        QCOMPARE(kind_of([] { run_allreduce_benchmark(2, {3}, 1); }), ErrorKind::InvalidSpec);
    }

    // More than the memory can hold: OutOfMemory, saying what to ask for instead.
    void buffers_that_do_not_fit_are_out_of_memory() {
        if (scalelab::testing::sanitizer_allocator)
            QSKIP("the sanitizers' operator new aborts on an impossible size instead of throwing");
        const std::size_t bytes = std::size_t(1) << 62;  // more than any address space
        try {
            run_allreduce_benchmark(2, {bytes}, 1);
            QFAIL("expected an error");
        } catch (const Error& error) {
            QCOMPARE(error.kind(), ErrorKind::OutOfMemory);
            QCOMPARE(QString::fromStdString(error.what()),
                     QString("the all-reduce benchmark could not allocate 2 buffers of %1 bytes; "
                             "ask for smaller --sizes or fewer --devices")
                         .arg(bytes));
        }
    }
};

QTEST_APPLESS_MAIN(TestAllReduceBenchmark)
#include "test_allreduce_benchmark.moc"
