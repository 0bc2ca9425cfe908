#include <QElapsedTimer>
#include <QThread>
#include <QtTest>

#include <memory>
#include <vector>

#include "run_controller.h"
#include "short_runs.h"

using scalelab::EpochMetrics;
using scalelab::RunController;
using scalelab::RunEnd;
using scalelab::RunInfo;
using scalelab::RunSpec;
using scalelab::RunStatus;
using scalelab::StepMetrics;
using scalelab::testing::endless_synthetic_run;
using scalelab::testing::short_synthetic_run;

namespace {

// Records what reaches the test's (main) thread, and whether each slot ran there.
class Recorder : public QObject {
  public:
    explicit Recorder(RunController& controller) {
        connect(&controller, &RunController::runStarted, this, [this](int id, const RunInfo& info) {
            check_thread();
            started.push_back(id);
            infos.push_back(info);
            if (running != 0)
                overlapped = true;
            running = id;
        });
        connect(&controller, &RunController::stepReported, this,
                [this](int, const StepMetrics& step) {
                    check_thread();
                    ++steps;
                    last_step = step.step;
                });
        connect(&controller, &RunController::epochReported, this,
                [this](int, const EpochMetrics& epoch) {
                    check_thread();
                    ++epochs;
                    last_epoch = epoch.epoch;
                });
        connect(&controller, &RunController::runEnded, this, [this](int id, const RunEnd& end) {
            check_thread();
            if (running == id)
                running = 0;
            else if (running != 0)
                overlapped = true;  // another run ended while this one was running
            ended.push_back(id);
            ends.push_back(end);
        });
        // Emitted on the caller's thread by enqueue() and on the controller's own when a run
        // is taken off the queue.
        connect(&controller, &RunController::queueChanged, this, [this] {
            check_thread();
            ++queue_changes;
        });
    }

    void check_thread() {
        if (QThread::currentThread() != thread())
            wrong_thread = true;
    }

    std::vector<int> started;
    std::vector<RunInfo> infos;
    std::vector<int> ended;
    std::vector<RunEnd> ends;
    int steps = 0;
    std::int64_t last_step = 0;
    int epochs = 0;
    int last_epoch = 0;
    int queue_changes = 0;
    int running = 0;
    bool overlapped = false;
    bool wrong_thread = false;
};

}  // namespace

class TestRunController : public QObject {
    Q_OBJECT

  private slots:
    void shortRunReportsOnTheMainThread() {
        RunController controller;
        Recorder recorder(controller);
        const int id = controller.start(short_synthetic_run());
        QVERIFY(id > 0);
        QVERIFY(controller.busy());
        // Everything is checked as the main thread received it: a QSignalSpy would record in
        // the emitting (worker) thread, racing with the reads here.
        QTRY_VERIFY_WITH_TIMEOUT(recorder.ended.size() == 1, 60000);

        QCOMPARE(recorder.started, std::vector<int>{id});
        QCOMPARE(recorder.infos.at(0).devices, 1);
        QCOMPARE(recorder.infos.at(0).steps_per_epoch, 8);
        QCOMPARE(recorder.ended, std::vector<int>{id});
        const RunEnd& end = recorder.ends.at(0);
        QVERIFY2(end.status == RunStatus::Finished, end.message.c_str());
        // Every step of the run arrived before its end, the last one last.
        QCOMPARE(end.step, std::int64_t{8});
        QCOMPARE(recorder.steps, 8);
        QCOMPARE(recorder.last_step, end.step);
        QCOMPARE(recorder.epochs, 1);
        QCOMPARE(recorder.last_epoch, 1);
        QVERIFY(!recorder.wrong_thread);
        QTRY_VERIFY_WITH_TIMEOUT(!controller.busy(), 5000);
    }

    void sweepRunsInOrder() {
        RunController controller;
        Recorder recorder(controller);
        std::vector<RunSpec> specs(3, short_synthetic_run());
        specs[1].lr = 0.1;
        specs[2].seed = 7;
        const std::vector<int> ids = controller.enqueue(specs);
        QCOMPARE(ids.size(), std::size_t{3});
        QVERIFY(ids[0] < ids[1] && ids[1] < ids[2]);
        QTRY_VERIFY_WITH_TIMEOUT(recorder.ended.size() == 3, 120000);

        QCOMPARE(recorder.started, ids);
        QCOMPARE(recorder.ended, ids);
        for (const RunEnd& end : recorder.ends)
            QVERIFY2(end.status == RunStatus::Finished, end.message.c_str());
        QVERIFY(!recorder.overlapped);
        QVERIFY(!recorder.wrong_thread);
        QVERIFY(recorder.queue_changes >= 1);
        QTRY_VERIFY_WITH_TIMEOUT(!controller.busy(), 5000);
    }

    void stopCancelsTheRunningRunAndRemovesQueuedOnes() {
        RunController controller;
        Recorder recorder(controller);
        const int running = controller.start(endless_synthetic_run());
        const int waiting = controller.start(short_synthetic_run());
        QTRY_VERIFY_WITH_TIMEOUT(recorder.steps >= 1, 60000);
        QCOMPARE(controller.current(), running);
        QCOMPARE(controller.queued(), std::vector<int>{waiting});

        controller.stop(waiting);  // queued: ends at once, never starts
        QCOMPARE(recorder.ended, std::vector<int>{waiting});
        QVERIFY(recorder.ends.back().status == RunStatus::Cancelled);
        QVERIFY(controller.queued().empty());

        QElapsedTimer timer;
        timer.start();
        controller.stop(running);
        QTRY_VERIFY_WITH_TIMEOUT(recorder.ended.size() == 2, 5000);
        QVERIFY(timer.elapsed() < 5000);
        QCOMPARE(recorder.ended.back(), running);
        QVERIFY2(recorder.ends.back().status == RunStatus::Cancelled,
                 recorder.ends.back().message.c_str());
        QCOMPARE(recorder.started, std::vector<int>{running});
        QTRY_VERIFY_WITH_TIMEOUT(!controller.busy(), 5000);

        controller.stop(running);  // already ended: ignored
        controller.stop(12345);    // unknown: ignored
        QCOMPARE(recorder.ended.size(), std::size_t{2});
    }

    void invalidSpecFails() {
        RunController controller;
        Recorder recorder(controller);
        RunSpec spec = short_synthetic_run();
        spec.batch = 0;
        spec.model = "no-such-model";
        controller.start(spec);
        QTRY_VERIFY_WITH_TIMEOUT(recorder.ended.size() == 1, 10000);
        const RunEnd& end = recorder.ends[0];
        QVERIFY(end.status == RunStatus::Failed);
        QVERIFY2(end.message.find("batch") != std::string::npos, end.message.c_str());
        QVERIFY2(end.message.find("model") != std::string::npos, end.message.c_str());
        QVERIFY(recorder.started.empty());

        // The controller goes on with the next run.
        controller.start(short_synthetic_run());
        QTRY_VERIFY_WITH_TIMEOUT(recorder.ended.size() == 2, 60000);
        QVERIFY(recorder.ends[1].status == RunStatus::Finished);
    }

    void missingDatasetFails() {
        RunController controller;
        Recorder recorder(controller);
        RunSpec spec = short_synthetic_run();
        spec.dataset = "mnist";
        spec.data_dir = "/nonexistent/scalelab-test-mnist";
        controller.start(spec);
        QTRY_VERIFY_WITH_TIMEOUT(recorder.ended.size() == 1, 10000);
        const RunEnd& end = recorder.ends[0];
        QVERIFY(end.status == RunStatus::Failed);
        QVERIFY2(end.message.find("/nonexistent/scalelab-test-mnist") != std::string::npos,
                 end.message.c_str());
        QVERIFY(!recorder.wrong_thread);
    }

    void destroyingMidRunReturnsPromptly() {
        auto controller = std::make_unique<RunController>();
        Recorder recorder(*controller);
        controller->start(endless_synthetic_run());
        controller->start(short_synthetic_run());
        QTRY_VERIFY_WITH_TIMEOUT(recorder.steps >= 1, 60000);
        QElapsedTimer timer;
        timer.start();
        controller.reset();
        QVERIFY2(timer.elapsed() < 5000, QByteArray::number(timer.elapsed()).constData());
        // Events posted before the end may still arrive; none may crash.
        QCoreApplication::processEvents();
    }

    void destroyingIdleReturnsAtOnce() {
        QElapsedTimer timer;
        timer.start();
        { RunController controller; }
        QVERIFY(timer.elapsed() < 1000);
    }
};

QTEST_GUILESS_MAIN(TestRunController)
#include "test_run_controller.moc"
