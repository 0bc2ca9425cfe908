// The time breakdown is measured in the backend's stream of work: every part of a step is the
// difference of two of the backend's timestamps (on a GPU, CUDA events), each part is the one
// that ended at the later of them, and nothing is read before the step's last timestamp, so a
// GPU step waits for its GPU once, at its end. Checked with timestamps that report a scripted
// clock instead of the host's and log when they are read. The loss's numbers, the step's other
// wait, are asked for once backward is given, and an evaluation's once the next batch is staged:
// checked with a loss and an input stage that log their calls.

#include <QtTest>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "comm/thread_comm.h"
#include "data/batch_loader.h"
#include "error.h"
#include "forwarding_cpu_backend.h"
#include "gpu_test_support.h"
#include "logged_calls.h"
#include "train/device_worker.h"
#include "train/step_timeline.h"

using namespace scalelab;

namespace {

// What the scripted timestamps share: the clock each mark() reads (in seconds) and then moves
// on, how many marks were made, and how many had been made when the first one was read.
struct ScriptedClock {
    std::vector<double> times;  // the k-th mark reads times[k]
    int marks = 0;
    int marks_at_first_read = -1;
};

class ScriptedTimestamp final : public Timestamp {
  public:
    explicit ScriptedTimestamp(ScriptedClock& clock) : clock_(clock) {}
    void mark() override {
        if (std::size_t(clock_.marks) >= clock_.times.size())
            throw std::logic_error("more marks than the script has times");
        at_ = clock_.times[std::size_t(clock_.marks++)];
    }
    double seconds_since(Timestamp& earlier) override {
        if (clock_.marks_at_first_read < 0)
            clock_.marks_at_first_read = clock_.marks;
        return at_ - dynamic_cast<ScriptedTimestamp&>(earlier).at_;
    }

  private:
    ScriptedClock& clock_;
    double at_ = 0;
};

class ScriptedClockBackend final : public testing::ForwardingCpuBackend {
  public:
    explicit ScriptedClockBackend(ScriptedClock& clock) : clock_(clock) {}
    std::unique_ptr<Timestamp> make_timestamp() override {
        return std::make_unique<ScriptedTimestamp>(clock_);
    }

  private:
    ScriptedClock& clock_;
};

// Logs "stage" for each batch copied to the backend.
class LoggedInputStage final : public InputStage {
  public:
    LoggedInputStage(std::unique_ptr<InputStage> stage, std::vector<std::string>& log)
        : stage_(std::move(stage)), log_(log) {}
    float* stage(std::span<const float> host) override {
        log_.push_back("stage");
        return stage_->stage(host);
    }

  private:
    std::unique_ptr<InputStage> stage_;
    std::vector<std::string>& log_;
};

// The CPU backend, logging its loss's calls (LoggedLoss) and its input stage's (LoggedInputStage)
// into one log, in order.
class CallLoggingBackend final : public testing::LossLoggingBackend {
  public:
    using LossLoggingBackend::LossLoggingBackend;
    std::unique_ptr<InputStage> input_stage(std::size_t floats) override {
        return std::make_unique<LoggedInputStage>(ForwardingCpuBackend::input_stage(floats), log());
    }
};

// A clock whose k-th mark reads 2^k - 1: the time between marks k and k + 1 is 2^k, so every
// part's time says which marks bound it.
ScriptedClock doubling_clock(int marks) {
    ScriptedClock clock;
    for (int k = 0; k < marks; ++k)
        clock.times.push_back(double((1 << k) - 1));
    return clock;
}

data::Batch batch_of(int size) {
    data::Batch b;
    b.size = size;
    b.images = testing::random_values(std::size_t(size) * 28 * 28, 5);
    for (int s = 0; s < size; ++s)
        b.labels.push_back(s % 10);
    return b;
}

}  // namespace

class StepTimelineTest : public QObject {
    Q_OBJECT

  private slots:
    void each_phase_adds_the_time_up_to_its_end() {
        ScriptedClock clock{{10, 11, 13, 14, 18}};
        ScriptedClockBackend backend(clock);
        StepTimeline timeline(backend, 4);
        DeviceStepTimes times;
        times.data = 0.5;  // what the caller counted already stays
        timeline.start();
        timeline.end(&DeviceStepTimes::data);     // 10 -> 11
        timeline.end(&DeviceStepTimes::forward);  // 11 -> 13
        timeline.end(&DeviceStepTimes::data);     // 13 -> 14
        timeline.end(&DeviceStepTimes::forward);  // 14 -> 18
        QCOMPARE(clock.marks_at_first_read, -1);
        timeline.add_to(times);
        QCOMPARE(times.data, 0.5 + 1 + 1);
        QCOMPARE(times.forward, 2.0 + 4);
        QCOMPARE(times.backward, 0.0);
        QCOMPARE(times.optimizer, 0.0);
    }

    void a_second_step_starts_from_nothing() {
        ScriptedClock clock{{0, 1, 2, 7, 10}};
        ScriptedClockBackend backend(clock);
        StepTimeline timeline(backend, 2);
        DeviceStepTimes first, second;
        timeline.start();
        timeline.end(&DeviceStepTimes::wait);
        timeline.add_to(first);
        timeline.start();
        timeline.end(&DeviceStepTimes::optimizer);
        timeline.end(&DeviceStepTimes::wait);
        timeline.add_to(second);
        QCOMPARE(first.wait, 1.0);
        QCOMPARE(second.optimizer, 5.0);
        QCOMPARE(second.wait, 3.0);
        QCOMPARE(second.data, 0.0);
    }

    void more_phase_ends_than_made_for_is_an_internal_error() {
        ScriptedClock clock = doubling_clock(8);
        ScriptedClockBackend backend(clock);
        StepTimeline timeline(backend, 2);
        timeline.start();
        timeline.end(&DeviceStepTimes::data);
        timeline.end(&DeviceStepTimes::forward);
        try {
            timeline.end(&DeviceStepTimes::backward);
            QFAIL("a third phase end was accepted");
        } catch (const Error& e) {
            QCOMPARE(e.kind(), ErrorKind::Internal);
        }
    }

    void a_training_step_times_its_parts_with_the_backends_timestamps() {
        // One device, two micro-batches: the step marks its start, then data, forward and
        // backward twice, then exposed_comm, wait and optimizer: 10 marks, 9 parts.
        ScriptedClock clock = doubling_clock(10);
        RunSpec spec;
        spec.model = "mlp";
        spec.batch = 4;
        spec.accumulation = 2;
        const auto comms = comm::make_thread_comms(1);
        DeviceWorker worker(spec, Shape{1, 1, 28, 28},
                            std::make_unique<ScriptedClockBackend>(clock), *comms[0]);
        QCOMPARE(clock.marks, 0);  // the timestamps are made, none marked

        const data::Batch batch = batch_of(spec.batch);
        DeviceStepTimes times;
        const GlobalTotals totals = worker.train_step([&] { return &batch; }, 2, 2 * spec.batch,
                                                      spec.lr, 1, times, NextWork::Other);
        QCOMPARE(totals.count, 2.0 * spec.batch);
        QCOMPARE(clock.marks, 10);
        QCOMPARE(clock.marks_at_first_read, 10);  // read once the step was all given
        QCOMPARE(times.data, 1.0 + 8);            // parts 0 and 3
        QCOMPARE(times.forward, 2.0 + 16);        // parts 1 and 4
        QCOMPARE(times.backward, 4.0 + 32);       // parts 2 and 5
        QCOMPARE(times.exposed_comm, 64.0);
        QCOMPARE(times.wait, 128.0);
        QCOMPARE(times.optimizer, 256.0);
        QVERIFY(times.allreduce.empty());  // one device reduces nothing
    }

    void a_step_asks_for_its_loss_once_backward_is_given() {
        // On a GPU the loss's numbers are a wait for the host: asked for before backward, the
        // GPU would sit idle until the host had them and gave it backward.
        std::vector<std::string> log;
        RunSpec spec;
        spec.model = "mlp";
        spec.batch = 4;
        spec.accumulation = 2;
        const auto comms = comm::make_thread_comms(1);
        DeviceWorker worker(spec, Shape{1, 1, 28, 28}, std::make_unique<CallLoggingBackend>(log),
                            *comms[0]);
        const data::Batch batch = batch_of(spec.batch);
        DeviceStepTimes times;
        const GlobalTotals totals = worker.train_step([&] { return &batch; }, 2, 2 * spec.batch,
                                                      spec.lr, 1, times, NextWork::Other);
        QCOMPARE(log, (std::vector<std::string>{"stage", "forward", "backward", "result", "stage",
                                                "forward", "backward", "result"}));
        QCOMPARE(totals.count, 2.0 * spec.batch);
        QVERIFY(totals.loss_sum > 0);
    }

    void an_evaluation_stages_the_next_batch_before_it_asks_for_a_loss() {
        // On a GPU the next batch's copy then runs beside this batch's forward. Each batch is
        // staged once: the evaluation of a staged batch uses that copy.
        std::vector<std::string> log;
        RunSpec spec;
        spec.model = "mlp";
        spec.batch = 4;
        const Shape image{1, 1, 28, 28};
        const auto comms = comm::make_thread_comms(1);
        DeviceWorker worker(spec, image, std::make_unique<CallLoggingBackend>(log), *comms[0]);
        data::Dataset images;
        images.channels = 1;
        images.height = images.width = 28;
        for (std::size_t i = 0; i < 10; ++i) {
            for (std::size_t p = 0; p < images.image_size(); ++p)
                images.images.push_back(std::uint8_t((i * 37 + p * 11) % 256));
            images.labels.push_back(std::uint8_t(i % 10));
        }
        const data::Normalization norm{{0.5f}, {0.25f}};
        data::LoaderConfig config;
        config.batch = spec.batch;
        data::BatchLoader loader(images, norm, config);
        std::vector<std::uint32_t> indices{0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
        const GlobalTotals totals = worker.evaluate(loader, indices);
        QCOMPARE(log, (std::vector<std::string>{"stage", "forward", "stage", "result", "forward",
                                                "stage", "result", "forward", "result"}));

        // The same numbers as each batch evaluated on its own, in order.
        Replica plain(spec, image, std::make_unique<cpu::CpuBackend>(1));
        StepResult expected;
        loader.start_epoch(indices, 0);
        while (const data::Batch* batch = loader.next()) {
            plain.evaluate(*batch);
            const StepResult r = plain.result();
            expected.loss_sum += r.loss_sum;
            expected.correct += r.correct;
        }
        // all_reduce_totals sums in float.
        QCOMPARE(totals.count, 10.0);
        QCOMPARE(totals.loss_sum, double(float(expected.loss_sum)));
        QCOMPARE(totals.correct, double(float(expected.correct)));
    }

    void a_batch_fetched_ahead_counts_in_the_data_of_the_step_that_fetched_it() {
        // One device, one micro-batch, a step to follow: start, data, forward, backward,
        // exposed_comm, wait, optimizer, then the next step's batch staged (data): 8 marks.
        // The next step fetches nothing: its data part is only the time from its start to the
        // end of that (no) fetch.
        ScriptedClock clock = doubling_clock(16);
        RunSpec spec;
        spec.model = "mlp";
        spec.batch = 4;
        const auto comms = comm::make_thread_comms(1);
        DeviceWorker worker(spec, Shape{1, 1, 28, 28},
                            std::make_unique<ScriptedClockBackend>(clock), *comms[0]);
        const std::vector<data::Batch> batches{batch_of(spec.batch), batch_of(spec.batch)};
        int fetches = 0;
        const auto next_batch = [&] { return &batches[std::size_t(fetches++)]; };
        DeviceStepTimes first, second;
        worker.train_step(next_batch, 1, spec.batch, spec.lr, 1, first, NextWork::TrainStep);
        QCOMPARE(fetches, 2);  // its own batch and the next step's
        QCOMPARE(clock.marks, 8);
        QCOMPARE(clock.marks_at_first_read, 8);  // read once the next batch was staged too
        QCOMPARE(first.data, 1.0 + 64);          // parts 0 and 6
        QCOMPARE(first.optimizer, 32.0);
        worker.train_step(next_batch, 1, spec.batch, spec.lr, 2, second, NextWork::Other);
        QCOMPARE(fetches, 2);  // trained on the batch fetched ahead
        QCOMPARE(clock.marks, 8 + 7);
        QCOMPARE(second.data, 256.0);  // part 8: from its start (mark 8) to mark 9
        QCOMPARE(second.forward, 512.0);
    }
};

QTEST_GUILESS_MAIN(StepTimelineTest)
#include "test_step_timeline.moc"
