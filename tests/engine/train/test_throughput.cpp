// The training-throughput benchmark (`scalelab-cli bench train`): it measures, and when its
// devices' communicators are aborted (as NCCL's watchdog does on an error or a timeout) it ends
// with the reason instead of reporting the windows it never finished; a device out of memory
// names the batch to try instead.

#include <QtTest>

#include "comm/communicator.h"
#include "error.h"
#include "train/throughput.h"

using namespace scalelab;

namespace {

ThroughputConfig small_config(int devices) {
    ThroughputConfig cfg;
    cfg.model = "mlp";
    cfg.batch = 16;
    cfg.devices = devices;
    cfg.warmup_steps = 1;
    cfg.windows = 3;
    cfg.images_per_window = 16;
    return cfg;
}

}  // namespace

class TestThroughput : public QObject {
    Q_OBJECT

  private slots:
    void measures_images_per_second() {
        const ThroughputResult r = measure_training_throughput(small_config(2));
        QVERIFY(r.images_per_s_min > 0);
        QVERIFY(r.images_per_s_min <= r.images_per_s_median);
        QVERIFY(r.images_per_s_median <= r.images_per_s_max);
        QVERIFY(r.flops_per_image > 0);
        QVERIFY(r.step.forward > 0 && r.step.backward > 0);
    }

    void an_aborted_group_ends_the_benchmark_with_the_reason() {
        ThroughputConfig cfg = small_config(2);
        cfg.communicator_hook = [](int rank, comm::Communicator& communicator) {
            if (rank == 1)
                communicator.abort("injected: a collective waited past its timeout");
        };
        try {
            measure_training_throughput(cfg);
            QFAIL("the benchmark reported figures from devices that stopped");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Internal);
            QCOMPARE(QString(e.what()), QString("the benchmark's devices stopped: injected: a "
                                                "collective waited past its timeout"));
        }
    }

    // A device out of memory: the benchmark says which batch did not fit and which to try, as a
    // run does (docs/errors.md, E-RUN-OUT-OF-MEMORY); other devices are released, not left waiting.
    void out_of_memory_names_the_batch_to_try() {
        ThroughputConfig cfg = small_config(2);
        cfg.communicator_hook = [](int rank, comm::Communicator&) {
            if (rank == 1)
                throw Error(ErrorKind::OutOfMemory, "out of memory: use a smaller batch or model");
        };
        try {
            measure_training_throughput(cfg);
            QFAIL("the benchmark reported figures from a device that failed");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::OutOfMemory);
            QCOMPARE(QString(e.what()),
                     QString("out of memory: use a smaller batch or model (a batch of 16 images "
                             "per device does not fit: try batch 8)"));
        }
    }
};

QTEST_GUILESS_MAIN(TestThroughput)
#include "test_throughput.moc"
