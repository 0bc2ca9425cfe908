// Faults injected into running trainers, and what the trainer documents for each: a device
// that throws at a random step, a communicator aborted mid-run from a device or from another
// thread (a watchdog), the dataset's files deleted or truncated while the run trains, and a slow
// metrics sink. Every run must end (a watchdog fails the test on a hang), report its end once,
// keep the steps it reported before the fault exactly as an undisturbed run reports them, and
// leave no thread behind.

#include <QTemporaryDir>
#include <QtTest>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "../data/data_test_files.h"
#include "comm/thread_comm.h"
#include "data/load.h"
#include "error.h"
#include "recording_sink.h"
#include "short_runs.h"
#include "thread_watch.h"
#include "train/dataset_request.h"
#include "train/trainer.h"

using namespace scalelab;
using testing::RecordingSink;
using testing::settled_thread_count;
using testing::Watchdog;

namespace {

constexpr std::chrono::seconds run_limit{30};
constexpr int epochs = 4;

// An mlp on 512 synthetic images, 8 per device and step: 32 steps an epoch on 2 devices, 16 on
// 4. Small buckets, so that a step holds several all-reduces for an abort to land between. A
// learning rate low enough not to diverge (at 0.05 the loss does within a few hundred steps).
RunSpec spec_for(int devices) {
    RunSpec spec = testing::short_synthetic_run(epochs);
    spec.synthetic_train = 512;
    spec.devices = devices;
    spec.batch = 8;
    spec.lr = 0.01;
    spec.first_bucket_mb = 0.01;
    spec.bucket_mb = 0.1;
    return spec;
}

int total_steps(const RunSpec& spec) {
    return epochs * spec.synthetic_train / (spec.devices * spec.batch);
}

// A rank and a step drawn from `seed`, the step in the first half of the run so that the run is
// still going when the fault comes.
struct Fault {
    int rank = 0;
    std::int64_t step = 1;
};
Fault draw_fault(const RunSpec& spec, unsigned seed) {
    std::mt19937 random(seed);
    const Fault fault{
        std::uniform_int_distribution<int>(0, spec.devices - 1)(random),
        std::uniform_int_distribution<std::int64_t>(1, total_steps(spec) / 2)(random)};
    qInfo("seed %u: rank %d, step %lld", seed, fault.rank, static_cast<long long>(fault.step));
    return fault;
}

QString text(const std::string& s) {
    return QString::fromStdString(s);
}

// Every step `faulted` reported is the undisturbed run's step, bit for bit (the trainer is
// deterministic for a spec and seed).
void verify_steps_intact(const RecordingSink& faulted, const RecordingSink& undisturbed) {
    QVERIFY(faulted.steps.size() <= undisturbed.steps.size());
    for (std::size_t i = 0; i < faulted.steps.size(); ++i) {
        QCOMPARE(faulted.steps[i].step, std::int64_t(i + 1));
        QCOMPARE(faulted.steps[i].loss, undisturbed.steps[i].loss);
        QCOMPARE(faulted.steps[i].accuracy, undisturbed.steps[i].accuracy);
    }
}

// A sink that takes `delay` over each step, as a consumer that does its work in the callback
// would.
class SlowSink final : public MetricsSink {
  public:
    SlowSink(MetricsSink& inner, std::chrono::milliseconds delay) : inner_(inner), delay_(delay) {}
    void on_start(const RunInfo& info) override { inner_.on_start(info); }
    void on_step(const StepMetrics& step) override {
        std::this_thread::sleep_for(delay_);
        inner_.on_step(step);
    }
    void on_epoch(const EpochMetrics& epoch) override { inner_.on_epoch(epoch); }
    void on_end(const RunEnd& end) override { inner_.on_end(end); }

  private:
    MetricsSink& inner_;
    std::chrono::milliseconds delay_;
};

// Hands the group of the communicators a trainer uses to a thread that aborts it at a moment of
// its own choosing, as a watchdog that gave up on a collective would: some time after rank 0
// began step `after_step`.
class GroupAborter {
  public:
    GroupAborter(Trainer& trainer, std::int64_t after_step, std::chrono::microseconds delay,
                 std::string reason) {
        trainer.set_communicator_hook([this](int rank, comm::Communicator& communicator) {
            if (rank != 0)
                return;
            std::lock_guard lock(mutex_);
            group_ = dynamic_cast<comm::ThreadComm&>(communicator).group();
        });
        trainer.set_step_hook([this, after_step](int rank, std::int64_t step) {
            if (rank != 0 || step != after_step)
                return;
            {
                std::lock_guard lock(mutex_);
                reached_ = true;
            }
            reached_step_.notify_one();
        });
        thread_ = std::thread([this, delay, reason = std::move(reason)] {
            std::unique_lock lock(mutex_);
            reached_step_.wait(lock, [this] { return reached_ || given_up_; });
            if (given_up_)
                return;
            lock.unlock();
            std::this_thread::sleep_for(delay);
            group_->abort(reason);
        });
    }
    ~GroupAborter() {
        {
            std::lock_guard lock(mutex_);
            given_up_ = true;  // the run ended before the step: nothing to abort
        }
        reached_step_.notify_one();
        thread_.join();
    }
    GroupAborter(const GroupAborter&) = delete;
    GroupAborter& operator=(const GroupAborter&) = delete;

  private:
    std::mutex mutex_;
    std::condition_variable reached_step_;
    bool reached_ = false;
    bool given_up_ = false;
    std::shared_ptr<comm::ThreadGroup> group_;  // outlives the run: the aborter holds it
    std::thread thread_;                        // last: starts once the members it uses exist
};

// The four IDX files of an MNIST-style folder: 256 training and 64 test images of noise.
void write_idx_folder(const QString& dir) {
    using namespace data::testing;
    const auto file = [&](const char* name) { return (dir + '/' + name).toStdString(); };
    QVERIFY(write_plain(file("train-images-idx3-ubyte"),
                        idx_images(256, 28, 28, pattern(256 * 28 * 28, 1))));
    QVERIFY(write_plain(file("train-labels-idx1-ubyte"), idx_labels(pattern(256, 2, 10))));
    QVERIFY(write_plain(file("t10k-images-idx3-ubyte"),
                        idx_images(64, 28, 28, pattern(64 * 28 * 28, 3))));
    QVERIFY(write_plain(file("t10k-labels-idx1-ubyte"), idx_labels(pattern(64, 4, 10))));
}

data::DatasetRequest idx_request(const QString& dir) {
    data::DatasetRequest request;
    request.name = "mnist";
    request.dir = dir.toStdString();
    return request;
}

}  // namespace

class TestFaultInjection : public QObject {
    Q_OBJECT

  private slots:
    // The undisturbed runs every fault is compared with; their threads (and the thread pools
    // the first runs leave) are the baseline.
    void initTestCase() {
        for (int devices : {2, 4}) {
            const RunSpec spec = spec_for(devices);
            const RunEnd end = Trainer(spec, data_for(spec), undisturbed_[devices]).run();
            QCOMPARE(end.status, RunStatus::Finished);
            QCOMPARE(int(undisturbed_[devices].steps.size()), total_steps(spec));
        }
        baseline_threads_ = testing::thread_count();
    }

    // After every case: every thread the run started is gone.
    void cleanup() { QCOMPARE(settled_thread_count(baseline_threads_), baseline_threads_); }

    void aDeviceThatThrowsFailsTheRun_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<unsigned>("seed");
        for (unsigned seed : {1u, 2u, 3u}) {
            QTest::addRow("2 devices, seed %u", seed) << 2 << seed;
            QTest::addRow("4 devices, seed %u", seed) << 4 << seed;
        }
    }
    // Documented (Trainer): the run ends Failed with "device N: <message>", every thread is
    // joined before run() returns, on_end comes once. The device threw before step k, so the
    // steps reported are exactly 1 .. k-1, as the undisturbed run reported them.
    void aDeviceThatThrowsFailsTheRun() {
        QFETCH(int, devices);
        QFETCH(unsigned, seed);
        const RunSpec spec = spec_for(devices);
        const Fault fault = draw_fault(spec, seed);
        const std::string message = "injected fault at step " + std::to_string(fault.step);
        RecordingSink sink;
        RunEnd end;
        {
            const Watchdog watchdog("a run with a failing device", run_limit);
            const data::TrainTest data = data_for(spec);
            Trainer trainer(spec, data, sink);
            trainer.set_step_hook([&](int rank, std::int64_t step) {
                if (rank == fault.rank && step == fault.step)
                    throw std::runtime_error(message);
            });
            end = trainer.run();
        }
        QCOMPARE(end.status, RunStatus::Failed);
        QCOMPARE(text(end.message), text("device " + std::to_string(fault.rank) + ": " + message));
        QCOMPARE(int(sink.starts.size()), 1);
        QCOMPARE(int(sink.ends.size()), 1);
        QCOMPARE(text(sink.ends[0].message), text(end.message));
        QCOMPARE(std::int64_t(sink.steps.size()), fault.step - 1);
        verify_steps_intact(sink, undisturbed_[devices]);
    }

    void anAbortedCommunicatorFailsTheRun_data() {
        QTest::addColumn<int>("devices");
        QTest::addColumn<unsigned>("seed");
        QTest::addColumn<bool>("sync_bn");
        for (unsigned seed : {11u, 12u, 13u}) {
            QTest::addRow("2 devices, seed %u", seed) << 2 << seed << false;
            QTest::addRow("4 devices, seed %u", seed) << 4 << seed << false;
        }
        // The aborted group is the gradients'; the devices wait for one another in the
        // synchronised batch norm's group too.
        QTest::addRow("4 devices, sync batch norm") << 4 << 4u << true;
    }
    // Documented (Trainer): a communicator aborted by someone other than the trainer ends the
    // run as Failed with "communication aborted: <reason>". Here a thread aborts the group at a
    // random moment (0 to 2 ms) after rank 0 began a random step k: rank 0 reported every step
    // before k, perhaps a few more, never the whole run.
    void anAbortedCommunicatorFailsTheRun() {
        QFETCH(int, devices);
        QFETCH(unsigned, seed);
        QFETCH(bool, sync_bn);
        RunSpec spec = spec_for(devices);
        if (sync_bn) {
            spec.model = "cnn";  // has batch norm
            spec.sync_bn = true;
        }
        const Fault fault = draw_fault(spec, seed);
        const std::chrono::microseconds delay(std::mt19937(seed)() % 2000);
        const std::string reason = "watchdog: a collective took too long";
        RecordingSink sink;
        RunEnd end;
        {
            const Watchdog watchdog("a run with an aborted communicator", run_limit);
            const data::TrainTest data = data_for(spec);
            Trainer trainer(spec, data, sink);
            GroupAborter aborter(trainer, fault.step, delay, reason);
            end = trainer.run();
        }
        QCOMPARE(end.status, RunStatus::Failed);
        QCOMPARE(text(end.message), text("communication aborted: " + reason));
        QCOMPARE(int(sink.ends.size()), 1);
        QCOMPARE(text(sink.ends[0].message), text(end.message));
        QVERIFY(std::int64_t(sink.steps.size()) >= fault.step - 1);
        QVERIFY(int(sink.steps.size()) < total_steps(spec));
        if (!sync_bn)
            verify_steps_intact(sink, undisturbed_[devices]);
    }

    // The same from a device's own thread, between two steps: no device completes step k.
    void aDeviceAbortingItsCommunicatorFailsTheRun() {
        const RunSpec spec = spec_for(4);
        const Fault fault = draw_fault(spec, 5);
        const std::string reason = "device gave up";
        RecordingSink sink;
        RunEnd end;
        {
            const Watchdog watchdog("a run whose device aborts", run_limit);
            const data::TrainTest data = data_for(spec);
            Trainer trainer(spec, data, sink);
            std::vector<comm::Communicator*> communicators(std::size_t(spec.devices));
            trainer.set_communicator_hook([&](int rank, comm::Communicator& communicator) {
                communicators[std::size_t(rank)] = &communicator;
            });
            trainer.set_step_hook([&](int rank, std::int64_t step) {
                if (rank == fault.rank && step == fault.step)
                    communicators[std::size_t(rank)]->abort(reason);
            });
            end = trainer.run();
        }
        QCOMPARE(end.status, RunStatus::Failed);
        QCOMPARE(text(end.message), text("communication aborted: " + reason));
        QCOMPARE(int(sink.ends.size()), 1);
        QCOMPARE(std::int64_t(sink.steps.size()), fault.step - 1);
        verify_steps_intact(sink, undisturbed_[4]);
    }

    void datasetFilesThatGoMidRunChangeNothing_data() {
        QTest::addColumn<bool>("deleted");
        QTest::newRow("deleted") << true;
        QTest::newRow("truncated") << false;
    }
    // Documented (data::load_dataset, Trainer): a dataset is read whole into memory before the
    // first step, so deleting or truncating its files while the run trains changes nothing: the
    // run ends as an undisturbed one, with the same curves.
    void datasetFilesThatGoMidRunChangeNothing() {
        QFETCH(bool, deleted);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        write_idx_folder(dir.path());
        RunSpec spec = spec_for(2);
        spec.dataset = "mnist";
        spec.data_dir = dir.path().toStdString();

        RecordingSink undisturbed;
        const RunEnd expected =
            Trainer(spec, data::load_dataset(idx_request(dir.path())), undisturbed).run();
        QCOMPARE(expected.status, RunStatus::Finished);

        RecordingSink sink;
        RunEnd end;
        {
            const Watchdog watchdog("a run whose dataset files went", run_limit);
            const data::TrainTest data = data::load_dataset(idx_request(dir.path()));
            Trainer trainer(spec, data, sink);
            trainer.set_step_hook([&](int rank, std::int64_t step) {
                if (rank != 0 || step != 3)
                    return;
                std::vector<std::filesystem::path> files;
                for (const auto& file : std::filesystem::directory_iterator(spec.data_dir))
                    files.push_back(file.path());
                for (const auto& file : files) {
                    if (deleted)
                        std::filesystem::remove(file);
                    else
                        std::filesystem::resize_file(file, 10);
                }
            });
            end = trainer.run();
        }
        // The files really are gone: loading them now fails.
        QVERIFY_THROWS_EXCEPTION(Error, data::load_dataset(idx_request(dir.path())));

        QCOMPARE(end.status, expected.status);
        QCOMPARE(text(end.message), text(expected.message));
        QCOMPARE(end.step, expected.step);
        QCOMPARE(sink.steps.size(), undisturbed.steps.size());
        verify_steps_intact(sink, undisturbed);
        QCOMPARE(sink.epochs.size(), undisturbed.epochs.size());
        for (std::size_t i = 0; i < sink.epochs.size(); ++i)
            QCOMPARE(sink.epochs[i].val_accuracy, undisturbed.epochs[i].val_accuracy);
    }

    // Documented (MetricsSink): the trainer calls the sink on rank 0's thread and goes on when
    // it returns, so a sink must queue its work. One that does the work in the callback (20 ms a
    // step here) only slows the run down by that much: it loses nothing, changes nothing and
    // ends normally.
    void aSlowSinkOnlySlowsTheRun() {
        const RunSpec spec = spec_for(2);
        const auto delay = std::chrono::milliseconds(20);
        RecordingSink sink;
        SlowSink slow(sink, delay);
        QElapsedTimer timer;
        RunEnd end;
        {
            const Watchdog watchdog("a run with a slow sink", run_limit);
            timer.start();
            end = Trainer(spec, data_for(spec), slow).run();
        }
        QCOMPARE(end.status, RunStatus::Finished);
        QCOMPARE(int(sink.ends.size()), 1);
        QCOMPARE(sink.steps.size(), undisturbed_[2].steps.size());
        verify_steps_intact(sink, undisturbed_[2]);
        QVERIFY(timer.elapsed() >= qint64(sink.steps.size()) * delay.count());
    }

  private:
    static data::TrainTest data_for(const RunSpec& spec) {
        return data::load_dataset(dataset_request(spec));
    }

    std::map<int, RecordingSink> undisturbed_;  // by device count
    int baseline_threads_ = 0;
};

QTEST_MAIN(TestFaultInjection)
#include "test_fault_injection.moc"
