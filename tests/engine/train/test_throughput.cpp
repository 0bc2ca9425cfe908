// The training-throughput benchmark (`scalelab-cli bench train`): it measures, and when its
// devices' communicators are aborted (as NCCL's watchdog does on an error or a timeout) it ends
// with the reason instead of reporting the windows it never finished.

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
};

QTEST_GUILESS_MAIN(TestThroughput)
#include "test_throughput.moc"
