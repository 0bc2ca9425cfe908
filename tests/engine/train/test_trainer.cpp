// The trainer end to end on synthetic data: it learns, it is deterministic, it stops on a
// target, on divergence and on cancellation, and it reports each ending exactly once.

#include <QtTest>
#include <stdexcept>
#include <thread>

#include "data/synthetic.h"
#include "error.h"
#include "recording_sink.h"
#include "spinning_child.h"
#include "train/cpu_contention.h"
#include "train/device_threads.h"
#include "train/trainer.h"

using namespace scalelab;
using testing::RecordingSink;

namespace {

data::TrainTest synthetic(int train = 2048, int test = 512) {
    data::SyntheticConfig cfg;
    cfg.train = train;
    cfg.test = test;
    return data::make_synthetic(cfg);
}

RunSpec small_spec(const std::string& model) {
    RunSpec spec;
    spec.model = model;
    spec.dataset = "synthetic";
    spec.epochs = 2;
    spec.batch = 64;
    spec.lr = 0.05;
    spec.threads = 1;
    spec.seed = 3;
    return spec;
}

}  // namespace

class TrainerTest : public QObject {
    Q_OBJECT

  private slots:
    void learns_far_below_chance_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("mlp") << "mlp";
        QTest::newRow("cnn") << "cnn";
    }
    void learns_far_below_chance() {
        QFETCH(QString, model);
        const auto data = synthetic();
        RecordingSink sink;
        Trainer trainer(small_spec(model.toStdString()), data, sink);
        const RunEnd end = trainer.run();
        QCOMPARE(end.status, RunStatus::Finished);
        QCOMPARE(int(sink.epochs.size()), 2);
        QCOMPARE(int(sink.steps.size()), 2 * 2048 / 64);
        // Chance is ln 10 = 2.30 for 10 balanced classes.
        QVERIFY2(sink.epochs.back().train_loss < 0.5,
                 qPrintable(QString::number(sink.epochs.back().train_loss)));
        QVERIFY(sink.epochs.back().val_accuracy > 0.8);
        QVERIFY(sink.steps.front().loss > 1.5);
    }

    void same_seed_gives_identical_curves() {
        const auto data = synthetic(1024, 256);
        RunSpec spec = small_spec("cnn");
        spec.augment = Augmentation::CropFlip;
        RecordingSink a, b, c;
        Trainer(spec, data, a).run();
        Trainer(spec, data, b).run();
        spec.seed = 4;
        Trainer(spec, data, c).run();
        QCOMPARE(a.steps.size(), b.steps.size());
        bool differs = false;
        for (std::size_t i = 0; i < a.steps.size(); ++i) {
            QCOMPARE(a.steps[i].loss, b.steps[i].loss);  // bit for bit
            differs = differs || a.steps[i].loss != c.steps[i].loss;
        }
        QCOMPARE(a.epochs.back().val_loss, b.epochs.back().val_loss);
        QVERIFY(differs);
    }

    void stops_when_target_held_for_patience_epochs() {
        const auto data = synthetic(1024, 256);
        RunSpec spec = small_spec("mlp");
        spec.epochs = 10;
        spec.target_accuracy = 0.5;
        spec.patience = 2;
        RecordingSink sink;
        const RunEnd end = Trainer(spec, data, sink).run();
        QCOMPARE(end.status, RunStatus::ReachedTarget);
        QVERIFY(sink.epochs.size() >= 2 && sink.epochs.size() < 10);
        const auto n = sink.epochs.size();
        QVERIFY(sink.epochs[n - 1].val_accuracy >= 0.5 && sink.epochs[n - 2].val_accuracy >= 0.5);
        QCOMPARE(end.epoch, int(n));
    }

    void records_when_each_target_is_first_reached() {
        const auto data = synthetic(1024, 256);
        RunSpec spec = small_spec("mlp");
        spec.epochs = 4;
        spec.targets = {0.3, 0.9, 0.99999};
        RecordingSink sink;
        const RunEnd end = Trainer(spec, data, sink).run();
        QCOMPARE(end.status, RunStatus::Finished);
        // Each reached target appears once, in the epoch row of its first crossing.
        std::vector<TargetReached> from_epochs;
        for (const auto& e : sink.epochs) {
            for (const auto& r : e.reached) {
                QCOMPARE(r.epoch, e.epoch);
                QVERIFY(e.val_accuracy >= r.target);
                from_epochs.push_back(r);
            }
        }
        QCOMPARE(end.targets.size(), from_epochs.size());
        QVERIFY(!end.targets.empty());
        QCOMPARE(end.targets.front().target, 0.3);
        QCOMPARE(end.targets.front().epoch, 1);  // reached at the first evaluation
        QCOMPARE(end.targets.front().images, 1024.0);
        QVERIFY(end.targets.front().seconds > 0);
        // Reported exactly when some evaluation reached it.
        double best = 0;
        for (const auto& e : sink.epochs)
            best = std::max(best, e.val_accuracy);
        for (double t : spec.targets) {
            const bool reported =
                std::any_of(end.targets.begin(), end.targets.end(),
                            [&](const TargetReached& r) { return r.target == t; });
            QCOMPARE(reported, best >= t);
        }
        // A target is not reported again in later epochs.
        QCOMPARE(int(std::count_if(from_epochs.begin(), from_epochs.end(),
                                   [](const TargetReached& r) { return r.target == 0.3; })),
                 1);
    }

    // Out of memory names the batch that did not fit and half of it; other failures keep
    // their own words.
    // Each epoch reports the share of the cores other programs used since the run started: a
    // process spinning on a core while the trainer mostly sleeps is most of one core.
    void reports_what_other_programs_took_from_the_cores() {
        const std::optional<CpuTimes> probe = read_cpu_times();
        if (!probe)
            QSKIP("/proc/stat cannot be read here: the trainer reports no share (NaN)");
        const auto data = synthetic(1024, 128);
        RecordingSink sink;
        Trainer trainer(small_spec("mlp"), data, sink);
        // 32 steps of at least 15 ms: about half a second, well over the 0.2 s the measure needs.
        trainer.set_step_hook(
            [](int, std::int64_t) { std::this_thread::sleep_for(std::chrono::milliseconds(15)); });
        testing::SpinningChild other_program;
        QVERIFY2(other_program.started(), "fork failed");
        QCOMPARE(trainer.run().status, RunStatus::Finished);
        other_program.stop();
        const double share = sink.epochs.back().other_programs_share;
        QVERIFY2(share >= 0.5 / probe->cores && share <= 1.0, qPrintable(QString::number(share)));
    }

    void out_of_memory_names_the_batch_to_try() {
        RunSpec spec;
        spec.batch = 512;
        const Error oom(ErrorKind::OutOfMemory, "could not allocate 9 MiB: use a smaller batch");
        QCOMPARE(QString::fromStdString(failure_message(oom, spec)),
                 QString("could not allocate 9 MiB: use a smaller batch (a batch of 512 images "
                         "per device does not fit: try batch 256)"));
        spec.device = DeviceKind::Gpu;
        spec.batch = 1;
        QCOMPARE(QString::fromStdString(failure_message(oom, spec)),
                 QString("could not allocate 9 MiB: use a smaller batch (the model does not fit "
                         "on a GPU even at batch 1: use a smaller model or width)"));
        const Error internal(ErrorKind::Internal, "cudnnFind failed");
        QCOMPARE(QString::fromStdString(failure_message(internal, spec)),
                 QString("cudnnFind failed"));
        QCOMPARE(QString::fromStdString(failure_message(std::runtime_error("boom"), spec)),
                 QString("boom"));
    }

    void a_non_finite_loss_ends_the_run_as_diverged() {
        const auto data = synthetic(1024, 256);
        RunSpec spec = small_spec("mlp");
        spec.lr = 1e6;
        RecordingSink sink;
        const RunEnd end = Trainer(spec, data, sink).run();
        QCOMPARE(end.status, RunStatus::Diverged);
        QVERIFY(!sink.steps.empty());
        QCOMPARE(sink.steps.back().step, end.step);  // the failing step is reported
        QVERIFY(!std::isfinite(sink.steps.back().loss));
        QVERIFY(QString::fromStdString(end.message).contains("learning rate"));
        QCOMPARE(int(sink.ends.size()), 1);
    }

    // The end's message reads after its state: "finished: trained 1 epoch".
    void a_finished_run_says_how_many_epochs_in_words() {
        const auto data = synthetic(256, 64);
        for (const int epochs : {1, 2}) {
            RunSpec spec = small_spec("mlp");
            spec.epochs = epochs;
            RecordingSink sink;
            const RunEnd end = Trainer(spec, data, sink).run();
            QCOMPARE(end.status, RunStatus::Finished);
            QCOMPARE(QString::fromStdString(end.message),
                     epochs == 1 ? QString("trained 1 epoch") : QString("trained 2 epochs"));
        }
    }

    void cancel_from_another_thread_stops_within_a_step() {
        const auto data = synthetic(8192, 256);
        RunSpec spec = small_spec("cnn");
        spec.epochs = 50;
        RecordingSink sink;
        Trainer trainer(spec, data, sink);
        std::thread canceller([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            trainer.cancel();
        });
        const RunEnd end = trainer.run();
        canceller.join();
        QCOMPARE(end.status, RunStatus::Cancelled);
        QVERIFY2(QString::fromStdString(end.message).startsWith("stopped at step "),
                 end.message.c_str());
        QVERIFY(end.epoch < 50);
        QCOMPARE(int(sink.ends.size()), 1);
        QCOMPARE(sink.ends.front().status, RunStatus::Cancelled);
    }

    void invalid_spec_is_rejected_before_the_run() {
        const auto data = synthetic(256, 64);
        RunSpec spec = small_spec("cnn");
        spec.batch = 0;
        spec.lr = -1;
        RecordingSink sink;
        try {
            Trainer trainer(spec, data, sink);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidSpec);
            QVERIFY(QString(e.what()).contains("batch"));
            QVERIFY(QString(e.what()).contains("lr"));
        }
        QVERIFY(sink.ends.empty());
    }

    // Data the spec cannot train on, found against the loaded images before any thread runs.
    void data_the_models_cannot_use_is_rejected_before_the_run_data() {
        QTest::addColumn<int>("train");
        QTest::addColumn<int>("size");
        QTest::addColumn<int>("devices");
        QTest::addColumn<QString>("message");
        QTest::newRow("no training images") << 0 << 28 << 1
                                            << "the dataset has no training or no test images: use "
                                               "a dataset (or subsets) with both";
        QTest::newRow("side not a multiple of 4")
            << 64 << 30 << 1
            << "the models take square 1- or 3-channel images whose side is a multiple of 4; "
               "this dataset's are 1x30x30";
        QTest::newRow("fewer images than devices")
            << 1 << 28 << 2
            << "the training set has 1 image(s), fewer than the 2 devices: use fewer devices or a "
               "larger train_subset";
    }
    void data_the_models_cannot_use_is_rejected_before_the_run() {
        QFETCH(int, train);
        QFETCH(int, size);
        QFETCH(int, devices);
        QFETCH(QString, message);
        data::SyntheticConfig cfg;
        cfg.train = std::max(train, 1);
        cfg.test = 16;
        cfg.size = size;
        data::TrainTest data = data::make_synthetic(cfg);
        data.train.labels.resize(std::size_t(train));
        data.train.images.resize(std::size_t(train) * data.train.image_size());
        RunSpec spec = small_spec("mlp");
        spec.devices = devices;
        RecordingSink sink;
        try {
            Trainer trainer(spec, data, sink);
            QFAIL("expected an error");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::InvalidSpec);
            QCOMPARE(QString::fromStdString(e.what()), message);
        }
        QVERIFY(sink.ends.empty());
    }

    void schedule_and_warmup_reach_the_steps() {
        const auto data = synthetic(1024, 256);
        RunSpec spec = small_spec("mlp");
        spec.warmup_length = 1;  // one epoch = 16 steps, from 0.1 lr
        RecordingSink sink;
        Trainer(spec, data, sink).run();
        QCOMPARE(sink.steps.front().lr, 0.1 * spec.lr);
        QVERIFY(sink.steps[8].lr > sink.steps[1].lr);
        QCOMPARE(sink.steps.back().lr, spec.lr);
    }
};

QTEST_APPLESS_MAIN(TrainerTest)
#include "test_trainer.moc"
