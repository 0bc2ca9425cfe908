// Faults injected into recorded runs, through the run controller and `scalelab-cli train` as the
// GUI and the terminal start them: a device that throws, a disk that fills up mid-run, a store
// that stops answering. Each run ends as documented with the reason recorded, the store keeps
// every row committed before the fault, and no thread is left behind.
//
// The store's faults come from fault_injection::set_store_write_hook, which runs before each
// write transaction on the writing thread. A full disk is SQLite's own: the connection may not
// grow its database by one more page (PRAGMA max_page_count), and SQLite answers SQLITE_FULL
// exactly as when the disk has no room left. Only the recorder's writes meet the faults; the
// test's own connections (on the test's thread) write and read as usual.

#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cli/exit_codes.h"
#include "cli/sink_fanout.h"
#include "cli/train_command.h"
#include "data/load.h"
#include "run_controller.h"
#include "run_recorder.h"
#include "run_store.h"
#include "short_runs.h"
#include "thread_watch.h"
#include "train/dataset_request.h"
#include "train/trainer.h"

using namespace scalelab;
using testing::settled_thread_count;
using testing::Watchdog;

namespace {

constexpr std::chrono::seconds run_limit{30};
constexpr int run_limit_ms = 30'000;

// An mlp on 512 synthetic images, 8 per device and step: 512 / (8 * devices) steps an epoch.
// A learning rate low enough for a thousand epochs (at 0.05 the loss diverges within ten): the
// full-disk runs must end for the disk, not for the loss.
RunSpec spec_for(int devices, int epochs) {
    RunSpec spec = testing::short_synthetic_run(epochs);
    spec.synthetic_train = 512;
    spec.devices = devices;
    spec.batch = 8;
    spec.lr = 0.01;
    return spec;
}

int total_steps(const RunSpec& spec) {
    return spec.epochs * spec.synthetic_train / (spec.devices * spec.batch);
}

// What the recorder says when the disk holding the store is full.
QString disk_full_reason(const QString& path) {
    return QStringLiteral(
               "the disk holding %1 is full: free space; the run stopped, what was recorded "
               "before is kept")
        .arg(path);
}

// The store's faults, applied by the write hooks below on whichever thread writes.
std::thread::id test_thread;
std::atomic<int> recorder_writes{0};  // write transactions begun by threads other than the test's
std::atomic<int> full_from_write{0};  // the first of them that finds the disk full
std::mutex gate_mutex;
std::condition_variable gate_opened;
bool gate_open = true;

bool on_test_thread() {
    return std::this_thread::get_id() == test_thread;
}

// From the full_from_write-th write on, the connection may not grow its database any more.
void fill_disk(QSqlDatabase& connection) {
    if (on_test_thread() || ++recorder_writes < full_from_write)
        return;
    QSqlQuery pages(connection);
    if (!pages.exec(QStringLiteral("PRAGMA page_count")) || !pages.next())
        qFatal("cannot read the store's page count");
    QSqlQuery limit(connection);
    if (!limit.exec(QStringLiteral("PRAGMA max_page_count = %1").arg(pages.value(0).toInt())))
        qFatal("cannot limit the store's page count");
}

// Each write waits until the gate opens: a store on a disk that stopped answering.
void wait_at_gate(QSqlDatabase&) {
    if (on_test_thread())
        return;
    ++recorder_writes;
    std::unique_lock lock(gate_mutex);
    gate_opened.wait(lock, [] { return gate_open; });
}

// A disk that fills up at the recorder's `first_full_write`-th write transaction: the first
// one is the run's start, the next ones its metrics, once a second.
class FullDisk {
  public:
    explicit FullDisk(int first_full_write) {
        recorder_writes = 0;
        full_from_write = first_full_write;
        fault_injection::set_store_write_hook(fill_disk);
    }
    ~FullDisk() { fault_injection::set_store_write_hook(nullptr); }
    FullDisk(const FullDisk&) = delete;
    FullDisk& operator=(const FullDisk&) = delete;
};

// A store whose writes hang until release(). Declare it after the recorder it holds up, so that
// a test that fails early releases the writer before the recorder joins it.
class StuckStore {
  public:
    StuckStore() {
        recorder_writes = 0;
        set_gate(false);
        fault_injection::set_store_write_hook(wait_at_gate);
    }
    ~StuckStore() {
        release();
        fault_injection::set_store_write_hook(nullptr);
    }
    StuckStore(const StuckStore&) = delete;
    StuckStore& operator=(const StuckStore&) = delete;

    void release() { set_gate(true); }

  private:
    static void set_gate(bool open) {
        {
            std::lock_guard lock(gate_mutex);
            gate_open = open;
        }
        gate_opened.notify_all();
    }
};

// What a run controller's signals bring to the test's thread, in order.
class ControllerEvents : public QObject {
  public:
    void listen(RunController& controller) {
        connect(&controller, &RunController::stepReported, this,
                [this](int, const StepMetrics& step) { steps.push_back(step); });
        connect(&controller, &RunController::runEnded, this,
                [this](int, const RunEnd& end) { ends.push_back(end); });
    }

    std::vector<StepMetrics> steps;
    std::vector<RunEnd> ends;
};

// Trainer steps as a sink sees them.
class StepLog final : public MetricsSink {
  public:
    void on_step(const StepMetrics& step) override {
        std::lock_guard lock(mutex_);
        losses.push_back(step.loss);
    }
    std::vector<double> losses;

  private:
    std::mutex mutex_;
};

// Run `id` of the store at `path` as a new connection reads it: what a later session finds.
RunRecord stored_run(const QString& path, std::int64_t id) {
    return RunStore::open(path)->load_record(id);
}

// The stored training losses are those of steps 1, 2, ... in order, as the run reported them.
void verify_stored_prefix(const RunRecord& run, const std::vector<double>& reported) {
    const std::vector<MetricPoint>& losses = run.curve(Metric::TrainLoss);
    QVERIFY(losses.size() <= reported.size());
    for (std::size_t i = 0; i < losses.size(); ++i) {
        QCOMPARE(losses[i].step, std::int64_t(i + 1));
        QCOMPARE(losses[i].value, reported[i]);
    }
}

std::vector<double> losses_of(const std::vector<StepMetrics>& steps) {
    std::vector<double> losses;
    for (const StepMetrics& step : steps)
        losses.push_back(step.loss);
    return losses;
}

}  // namespace

class TestFaultInjectionStore : public QObject {
    Q_OBJECT

  private slots:
    // One undisturbed run through each path first: the threads left after it (pools that live
    // as long as the process) are the baseline.
    void initTestCase() {
        test_thread = std::this_thread::get_id();
        QVERIFY(dir_.isValid());
        const QString path = dir_.filePath(QStringLiteral("warm-up.sqlite"));
        const RunSpec spec = spec_for(2, 1);
        const std::int64_t id = RunStore::open(path)->create_run(spec, QStringLiteral("warm-up"));
        ControllerEvents events;
        {
            RunController controller;
            controller.setStorePath(path);
            events.listen(controller);
            controller.start(spec, id);
            QTRY_VERIFY_WITH_TIMEOUT(events.ends.size() == 1, run_limit_ms);
        }
        QCOMPARE(events.ends[0].status, RunStatus::Finished);
        baseline_threads_ = testing::thread_count();
    }

    void cleanup() { QCOMPARE(settled_thread_count(baseline_threads_), baseline_threads_); }

    void aFailingDeviceIsStoredAsFailedWithTheStepsBefore_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<unsigned>("seed");
        QTest::addRow("2 devices") << 2 << 7u;
        QTest::addRow("4 devices") << 4 << 10u;
    }
    // Documented (Trainer, RunController, RunRecorder): the run ends Failed with "device N:
    // <message>", and the store holds it so, with every step reported before the fault: the
    // end reaches the window only once the store holds it.
    void aFailingDeviceIsStoredAsFailedWithTheStepsBefore() {
        QFETCH(int, devices);
        QFETCH(unsigned, seed);
        const RunSpec spec = spec_for(devices, 4);
        std::mt19937 random(seed);
        const int fault_rank = std::uniform_int_distribution<int>(0, devices - 1)(random);
        const std::int64_t fault_step =
            std::uniform_int_distribution<std::int64_t>(1, total_steps(spec) - 1)(random);
        qInfo("rank %d throws before step %lld", fault_rank, static_cast<long long>(fault_step));
        const std::string message = "injected fault at step " + std::to_string(fault_step);

        const QString path = dir_.filePath(QStringLiteral("failing-device-%1.sqlite").arg(seed));
        const std::int64_t id = RunStore::open(path)->create_run(spec, QStringLiteral("failing"));
        ControllerEvents events;
        {
            const Watchdog watchdog("a recorded run with a failing device", run_limit);
            RunController controller;
            controller.setStorePath(path);
            controller.setTrainerHook([&](Trainer& trainer) {
                trainer.set_step_hook([&](int rank, std::int64_t step) {
                    if (rank == fault_rank && step == fault_step)
                        throw std::runtime_error(message);
                });
            });
            events.listen(controller);
            controller.start(spec, id);
            QTRY_VERIFY_WITH_TIMEOUT(events.ends.size() == 1, run_limit_ms);
        }
        const QString expected =
            QStringLiteral("device %1: %2").arg(fault_rank).arg(QString::fromStdString(message));
        QCOMPARE(events.ends[0].status, RunStatus::Failed);
        QCOMPARE(QString::fromStdString(events.ends[0].message), expected);
        QCOMPARE(std::int64_t(events.steps.size()), fault_step - 1);

        const RunRecord run = stored_run(path, id);
        QCOMPARE(run.state, RunState::Failed);
        QCOMPARE(run.message, expected);
        QCOMPARE(run.curve(Metric::TrainLoss).size(), events.steps.size());
        verify_stored_prefix(run, losses_of(events.steps));
    }

    // Documented (RunRecorder, RunController): a write that fails stops recording; the
    // controller cancels the run and ends it Failed with the recorder's reason; what was
    // committed before stays. The run would train for minutes: it ends within seconds.
    void aFullDiskStopsAControllerRun() {
        const RunSpec spec = spec_for(2, 1000);
        const QString path = dir_.filePath(QStringLiteral("full-controller.sqlite"));
        const std::int64_t id = RunStore::open(path)->create_run(spec, QStringLiteral("full"));
        ControllerEvents events;
        {
            const FullDisk full(3);
            const Watchdog watchdog("a controller run on a full disk", run_limit);
            RunController controller;
            controller.setStorePath(path);
            events.listen(controller);
            controller.start(spec, id);
            QTRY_VERIFY_WITH_TIMEOUT(events.ends.size() == 1, run_limit_ms);
        }
        QCOMPARE(events.ends[0].status, RunStatus::Failed);
        QCOMPARE(QString::fromStdString(events.ends[0].message), disk_full_reason(path));
        QVERIFY(int(events.steps.size()) < total_steps(spec));

        // The end still fits in the pages the store has; the rows of the failed commit and
        // after it are not there.
        const RunRecord run = stored_run(path, id);
        QCOMPARE(run.state, RunState::Failed);
        QCOMPARE(run.message, disk_full_reason(path));
        QVERIFY(!run.curve(Metric::TrainLoss).empty());
        QVERIFY(run.curve(Metric::TrainLoss).size() < events.steps.size());
        verify_stored_prefix(run, losses_of(events.steps));
    }

    // Documented (RecordingGuard, `scalelab-cli train`): the same through the command line's
    // path: the run is cancelled at its next step, the command exits with 1 (failed), and the
    // store holds the run as failed with the reason and the rows committed before.
    void aFullDiskStopsACommandLineRun() {
        const QString path = dir_.filePath(QStringLiteral("full-cli.sqlite"));
        const RunSpec spec = spec_for(2, 1000);  // what the flags below ask for
        int exit_code = -1;
        {
            const FullDisk full(3);
            const Watchdog watchdog("scalelab-cli train on a full disk", run_limit);
            exit_code = cli::run_train_command({"--dataset",
                                                "synthetic",
                                                "--model",
                                                "mlp",
                                                "--synthetic-train",
                                                "512",
                                                "--synthetic-test",
                                                "64",
                                                "--batch",
                                                "8",
                                                "--devices",
                                                "2",
                                                "--threads",
                                                "1",
                                                "--lr",
                                                "0.01",
                                                "--epochs",
                                                "1000",
                                                "--store",
                                                path.toStdString()});
        }
        QCOMPARE(exit_code, int(cli::exit_failed));
        const std::vector<StoredRun> runs = RunStore::open(path)->list_runs();
        QCOMPARE(runs.size(), std::size_t{1});
        QCOMPARE(runs[0].state, RunState::Failed);
        QCOMPARE(runs[0].message, disk_full_reason(path));
        const RunRecord run = stored_run(path, runs[0].id);
        const std::vector<MetricPoint>& losses = run.curve(Metric::TrainLoss);
        QVERIFY(!losses.empty());
        for (std::size_t i = 0; i < losses.size(); ++i)
            QCOMPARE(losses[i].step, std::int64_t(i + 1));
        QVERIFY(int(losses.size()) < total_steps(spec));
    }

    // Documented (RunRecorder, MetricsSink): the recorder only queues, so the trainer never
    // waits for the store. Here the store does not finish a single write while the whole run
    // trains: the run still ends, with every step, and once the store answers again it holds
    // all of them.
    void aStuckStoreDoesNotHoldUpTheTrainer() {
        const RunSpec spec = spec_for(2, 2);
        const QString path = dir_.filePath(QStringLiteral("stuck.sqlite"));
        const std::int64_t id = RunStore::open(path)->create_run(spec, QStringLiteral("stuck"));
        const data::TrainTest data = data::load_dataset(dataset_request(spec));
        StepLog steps;
        {
            const Watchdog watchdog("a run on a stuck store", run_limit);
            RunRecorder recorder(path, id);
            StuckStore stuck;
            cli::SinkFanout sinks({&recorder, &steps});
            const RunEnd end = Trainer(spec, data, sinks).run();
            QCOMPARE(end.status, RunStatus::Finished);
            QCOMPARE(int(steps.losses.size()), total_steps(spec));
            QCOMPARE(recorder_writes.load(), 1);  // the run's start, still not written
            stuck.release();
            recorder.flush();
            QVERIFY(!recorder.failure());
        }
        const RunRecord run = stored_run(path, id);
        QCOMPARE(run.state, RunState::Finished);
        QCOMPARE(run.curve(Metric::TrainLoss).size(), steps.losses.size());
        verify_stored_prefix(run, steps.losses);
    }

    // Documented (RunController): every step reaches the window as it is trained, but the end
    // only once the store holds it: while the store is stuck, the run has reported all its
    // steps and not its end.
    void aStuckStoreHoldsBackOnlyTheEnd() {
        const RunSpec spec = spec_for(2, 2);
        const QString path = dir_.filePath(QStringLiteral("stuck-controller.sqlite"));
        const std::int64_t id = RunStore::open(path)->create_run(spec, QStringLiteral("stuck"));
        ControllerEvents events;
        {
            const Watchdog watchdog("a controller run on a stuck store", run_limit);
            RunController controller;
            controller.setStorePath(path);
            events.listen(controller);
            StuckStore stuck;
            controller.start(spec, id);
            QTRY_VERIFY_WITH_TIMEOUT(int(events.steps.size()) == total_steps(spec), run_limit_ms);
            QTest::qWait(300);
            QVERIFY(events.ends.empty());
            stuck.release();
            QTRY_VERIFY_WITH_TIMEOUT(events.ends.size() == 1, run_limit_ms);
        }
        QCOMPARE(events.ends[0].status, RunStatus::Finished);
        const RunRecord run = stored_run(path, id);
        QCOMPARE(run.state, RunState::Finished);
        QCOMPARE(run.curve(Metric::TrainLoss).size(), events.steps.size());
        verify_stored_prefix(run, losses_of(events.steps));
    }

  private:
    QTemporaryDir dir_;
    int baseline_threads_ = 0;
};

QTEST_MAIN(TestFaultInjectionStore)
#include "test_fault_injection_store.moc"
