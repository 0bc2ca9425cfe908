// Bucket plans and the gradient reducer: buckets tile the buffer on parameter boundaries with
// DDP's sizes, and the reducer averages every bucket whether it overlaps backward or not, timing
// each bucket's all-reduce.

#include <QtTest>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu/cpu_backend.h"
#include "comm/thread_comm.h"
#include "forwarding_cpu_backend.h"
#include "train/gradient_reducer.h"

using namespace scalelab;

namespace {

// A communicator of which the gradient reducer may only use the all-reduce it starts and
// finishes (and make_fence).
class ReducerOnlyComm : public comm::Communicator {
  public:
    void all_reduce(std::span<float>, comm::ReduceOp) override { unused(); }
    void broadcast(std::span<float>, int) override { unused(); }
    void all_gather(std::span<const float>, std::span<float>) override { unused(); }
    void barrier() override { unused(); }
    void abort(const std::string&) override { unused(); }

  private:
    [[noreturn]] static void unused() {
        throw std::logic_error("the gradient reducer only starts and finishes all-reduces");
    }
};

// Rank 0 of `size`, whose all-reduce takes `wall` on the host, as NCCL's does while its stream
// waits for backward, reports that the all-reduce itself took `measured`, and counts its calls.
// With fail_at set, that call (counting from 1) throws comm::Aborted, in start or in finish.
class FakeComm final : public ReducerOnlyComm {
  public:
    enum class FailIn { Start, Finish };
    FakeComm(int size, std::chrono::milliseconds wall, double measured, int fail_at = 0,
             FailIn fail_in = FailIn::Start)
        : size_(size), wall_(wall), measured_(measured), fail_at_(fail_at), fail_in_(fail_in) {}
    int rank() const override { return 0; }
    int size() const override { return size_; }
    std::optional<double> start_all_reduce_after(Fence& ready, std::span<float>, comm::ReduceOp,
                                                 Fence* done) override {
        ready.wait();
        std::this_thread::sleep_for(wall_);
        ++calls;
        if (calls == fail_at_ && fail_in_ == FailIn::Start)
            throw comm::Aborted("start " + std::to_string(calls) + " failed");
        if (done != nullptr)
            done->mark();
        // Left running only to fail in finish.
        if (calls == fail_at_ && fail_in_ == FailIn::Finish)
            return std::nullopt;
        return measured_;
    }
    double finish_all_reduce() override {
        throw comm::Aborted("finish " + std::to_string(calls) + " failed");
    }

    int calls = 0;

  private:
    int size_;
    std::chrono::milliseconds wall_;
    double measured_;
    int fail_at_;
    FailIn fail_in_;
};

// What happened, in order, across the reducer's threads.
class EventLog {
  public:
    void add(std::string event) {
        std::lock_guard lock(mutex_);
        events_.push_back(std::move(event));
    }
    std::vector<std::string> events() {
        std::lock_guard lock(mutex_);
        return events_;
    }

  private:
    std::mutex mutex_;
    std::vector<std::string> events_;
};

class LoggedFence final : public Fence {
  public:
    LoggedFence(EventLog& log, std::string name) : log_(log), name_(std::move(name)) {}
    void mark() override { log_.add("mark " + name_); }
    void wait() override { log_.add("host waits for " + name_); }

  private:
    EventLog& log_;
    std::string name_;
};

// Rank 0 of two, whose all-reduces run on a stream of their own, as NCCL's do: start returns at
// once, and the last bucket's all-reduce completes only once the test releases it (or after
// 5 s, so that a reducer that waits for it on the host fails the test instead of hanging it).
class StreamComm final : public ReducerOnlyComm {
  public:
    StreamComm(EventLog& log, std::size_t buckets) : log_(log), buckets_(buckets) {}
    int rank() const override { return 0; }
    int size() const override { return 2; }
    std::optional<double> start_all_reduce_after(Fence& ready, std::span<float> data,
                                                 comm::ReduceOp, Fence* done) override {
        ready.wait();
        log_.add("start " + std::to_string(data.size()));
        ++started_;
        if (done != nullptr)
            done->mark();
        return std::nullopt;
    }
    double finish_all_reduce() override {
        if (started_ == buckets_) {
            std::unique_lock lock(mutex_);
            released_.wait_for(lock, std::chrono::seconds(5), [&] { return release_; });
            if (fail_)
                throw comm::Aborted("the last all-reduce failed");
        }
        log_.add("finish");
        return 0.001;
    }
    std::unique_ptr<Fence> make_fence() override {
        return std::make_unique<LoggedFence>(log_, "the all-reduces");
    }
    // Lets the last all-reduce complete, or fail.
    void release(bool fail = false) {
        {
            std::lock_guard lock(mutex_);
            release_ = true;
            fail_ = fail;
        }
        released_.notify_one();
    }

  private:
    EventLog& log_;
    std::size_t buckets_;
    std::size_t started_ = 0;
    std::mutex mutex_;
    std::condition_variable released_;
    bool release_ = false;
    bool fail_ = false;
};

// A CPU backend that logs what it is told to wait for.
class WaitLoggingBackend final : public testing::ForwardingCpuBackend {
  public:
    explicit WaitLoggingBackend(EventLog& log) : log_(log) {}
    void wait_for(Fence&) override { log_.add("backend waits"); }

  private:
    EventLog& log_;
};

}  // namespace

class GradientReducerTest : public QObject {
    Q_OBJECT

  private slots:
    void buckets_tile_the_buffer_on_parameter_boundaries() {
        // Parameters of 100, 200, 300, 5000, 50 and 10 floats (ends ascending).
        const std::vector<std::size_t> ends{100, 300, 600, 5600, 5650, 5660};
        const auto buckets = plan_buckets(ends, 250 * 4, 1000 * 4);
        QCOMPARE(buckets.front().begin, std::size_t(0));
        QCOMPARE(buckets.back().end, std::size_t(5660));
        for (std::size_t i = 1; i < buckets.size(); ++i)
            QCOMPARE(buckets[i].begin, buckets[i - 1].end);
        for (const auto& b : buckets)
            QVERIFY(std::find(ends.begin(), ends.end(), b.end) != ends.end());
        // The first bucket closes as soon as it reaches 250 floats: after the second parameter.
        QCOMPARE(buckets[0].end, std::size_t(300));
        // A parameter larger than the cap gets a bucket of its own.
        QCOMPARE(buckets[1].end, std::size_t(5600));
        QCOMPARE(buckets.size(), std::size_t(3));
    }

    void default_sizes_give_a_small_first_bucket() {
        std::vector<std::size_t> ends;
        for (std::size_t i = 1; i <= 100; ++i)
            ends.push_back(i * 100'000);  // 100 x 400 kB
        const auto buckets = plan_buckets(ends, 1 << 20, 25 << 20);
        QCOMPARE(buckets[0].end, std::size_t(300'000));  // 1.2 MB: first to reach 1 MB
        QCOMPARE(buckets[1].end - buckets[1].begin, std::size_t(6'600'000));  // >= 25 MB
    }

    void averages_every_bucket_with_and_without_overlap_data() {
        QTest::addColumn<bool>("overlap");
        QTest::addColumn<bool>("accumulate");
        QTest::newRow("overlap") << true << false;
        QTest::newRow("at the end") << false << false;
        QTest::newRow("overlap + accumulated") << true << true;
    }
    void averages_every_bucket_with_and_without_overlap() {
        QFETCH(bool, overlap);
        QFETCH(bool, accumulate);
        const std::vector<std::size_t> ends{10, 1000, 1003, 4000};
        const auto buckets = plan_buckets(ends, 16, 4000);
        auto group = comm::ThreadGroup::create(2);
        std::vector<std::vector<float>> grads(2, std::vector<float>(4000));
        std::vector<float> accumulated(accumulate ? 4000 : 0, 0.5f);
        std::vector<std::vector<BucketSpan>> spans(2);
        std::vector<double> finished(2);  // seconds from the step's start to finish()'s return
        std::vector<std::thread> ranks;
        for (int r = 0; r < 2; ++r) {
            ranks.emplace_back([&, r] {
                auto comm = group->communicator(r);
                auto& g = grads[std::size_t(r)];
                cpu::CpuBackend backend(1);
                GradientReducer reducer(backend, *comm, g, buckets, overlap);
                const auto step_start = GradientReducer::Clock::now();
                reducer.begin(accumulated, step_start);
                // Backward writes gradients in layout order and announces each parameter.
                std::size_t begin = 0;
                for (std::size_t end : ends) {
                    for (std::size_t i = begin; i < end; ++i)
                        g[i] = float(r + 1) * float(i);
                    reducer.gradients_written(g.data() + end);
                    begin = end;
                }
                reducer.finish();
                reducer.complete();
                finished[std::size_t(r)] =
                    std::chrono::duration<double>(GradientReducer::Clock::now() - step_start)
                        .count();
                spans[std::size_t(r)].assign(reducer.spans().begin(), reducer.spans().end());
            });
        }
        for (auto& t : ranks)
            t.join();
        // One span per bucket, in launch order, inside the step up to complete()'s return.
        for (std::size_t r = 0; r < 2; ++r) {
            QCOMPARE(spans[r].size(), buckets.size());
            for (std::size_t b = 0; b < buckets.size(); ++b) {
                QVERIFY(spans[r][b].start >= 0);
                QVERIFY(spans[r][b].end >= spans[r][b].start);
                QVERIFY(spans[r][b].end <= finished[r]);
                if (b > 0)
                    QVERIFY(spans[r][b].start >= spans[r][b - 1].end);
            }
        }
        for (std::size_t i = 0; i < 4000; ++i) {
            // mean over ranks of (r + 1) i (+ 0.5 accumulated on each) = 1.5 i (+ 0.5)
            const float expected = 1.5f * float(i) + (accumulate ? 0.5f : 0.0f);
            QCOMPARE(grads[0][i], expected);
            QCOMPARE(grads[1][i], expected);
        }
    }

    void a_span_lasts_what_the_communicator_measured() {
        // 30 ms on the host, of which the all-reduce itself took 2 ms: the span is the 2 ms
        // ending when the call returned, not the whole call.
        FakeComm comm(2, std::chrono::milliseconds(30), 0.002);
        std::vector<float> g(100, 1.0f);
        cpu::CpuBackend backend(1);
        GradientReducer reducer(backend, comm, g,
                                plan_buckets(std::vector<std::size_t>{10, 100}, 4, 40), false);
        const auto step_start = GradientReducer::Clock::now();
        reducer.begin({}, step_start);
        reducer.finish();
        reducer.complete();
        const double finished =
            std::chrono::duration<double>(GradientReducer::Clock::now() - step_start).count();
        QCOMPARE(reducer.spans().size(), std::size_t(2));
        for (const BucketSpan& span : reducer.spans()) {
            QVERIFY(std::abs(span.end - span.start - 0.002) < 1e-9);
            QVERIFY(span.end <= finished);
        }
        // Each call's 28 ms before the all-reduce lie between the spans.
        QVERIFY(reducer.spans()[0].end >= 0.030);
        QVERIFY(reducer.spans()[1].start - reducer.spans()[0].end >= 0.028);
    }

    void one_rank_communicates_nothing() {
        FakeComm comm(1, std::chrono::milliseconds(0), 0.0);
        std::vector<float> g(100, 2.0f);
        const std::vector<float> accumulated(100, 0.5f);
        cpu::CpuBackend backend(1);
        GradientReducer reducer(backend, comm, g,
                                plan_buckets(std::vector<std::size_t>{10, 100}, 4, 40), false);
        QCOMPARE(reducer.buckets().size(), std::size_t(2));
        reducer.begin(accumulated, GradientReducer::Clock::now());
        reducer.finish();
        reducer.complete();
        QCOMPARE(comm.calls, 0);
        QVERIFY(reducer.spans().empty());
        // The step's earlier micro-batches are still added in.
        QCOMPARE(g[0], 2.5f);
        QCOMPARE(g[99], 2.5f);
    }

    void the_backend_follows_the_last_all_reduce_without_the_host_waiting() {
        // Three buckets of 10, 30 and 60 floats, overlapping backward. finish() must return
        // while the last all-reduce still runs, having had the backend wait for the
        // communicator's fence, marked right behind that all-reduce's start.
        const std::vector<std::size_t> ends{10, 40, 100};
        const auto buckets = plan_buckets(ends, 40, 120);
        QCOMPARE(buckets.size(), std::size_t(3));
        EventLog log;
        StreamComm comm(log, buckets.size());
        WaitLoggingBackend backend(log);
        std::vector<float> g(100, 1.0f);
        GradientReducer reducer(backend, comm, g, buckets, /*overlap=*/true);
        reducer.begin({}, GradientReducer::Clock::now());
        for (std::size_t end : ends)
            reducer.gradients_written(g.data() + end);
        reducer.finish();
        log.add("finish() returned");
        comm.release();
        reducer.complete();
        const std::vector<std::string> expected{"start 10",      "finish",
                                                "start 30",      "finish",
                                                "start 60",      "mark the all-reduces",
                                                "backend waits", "finish() returned",
                                                "finish"};
        QCOMPARE(log.events(), expected);
        QCOMPARE(reducer.spans().size(), buckets.size());
    }

    void an_error_ends_the_step_data() {
        QTest::addColumn<bool>("overlap");
        QTest::addColumn<int>("fail_at");
        QTest::addColumn<bool>("in_finish");
        QTest::newRow("overlap, first start") << true << 1 << false;
        QTest::newRow("overlap, first finish") << true << 1 << true;
        QTest::newRow("overlap, last start") << true << 3 << false;
        QTest::newRow("at the end, first start") << false << 1 << false;
        QTest::newRow("at the end, last finish") << false << 3 << true;
    }
    void an_error_ends_the_step() {
        // Each of these errors is known before the last all-reduce has started, so finish()
        // throws it (the last all-reduce's own error: see the next test).
        QFETCH(bool, overlap);
        QFETCH(int, fail_at);
        QFETCH(bool, in_finish);
        FakeComm comm(2, std::chrono::milliseconds(0), 0.001, fail_at,
                      in_finish ? FakeComm::FailIn::Finish : FakeComm::FailIn::Start);
        std::vector<float> g(100, 1.0f);
        cpu::CpuBackend backend(1);
        GradientReducer reducer(backend, comm, g,
                                plan_buckets(std::vector<std::size_t>{10, 40, 100}, 40, 120),
                                overlap);
        QCOMPARE(reducer.buckets().size(), std::size_t(3));
        reducer.begin({}, GradientReducer::Clock::now());
        try {
            reducer.finish();
            QFAIL("finish() did not rethrow the failed all-reduce's error");
        } catch (const comm::Aborted& e) {
            const QString expected =
                QString(in_finish ? "finish " : "start ") + QString::number(fail_at) + " failed";
            QCOMPARE(QString(e.what()), expected);
        }
        // After a failed all-reduce the step's later buckets make no collective: the other
        // ranks may never join them.
        QCOMPARE(comm.calls, fail_at);
        // A step cannot begin while the failed one may still be reducing.
        QVERIFY_THROWS_EXCEPTION(std::logic_error,
                                 reducer.begin({}, GradientReducer::Clock::now()));
    }

    void the_last_all_reduces_error_is_thrown_by_complete() {
        const std::vector<std::size_t> ends{10, 40, 100};
        EventLog log;
        StreamComm comm(log, 3);
        cpu::CpuBackend backend(1);
        std::vector<float> g(100, 1.0f);
        GradientReducer reducer(backend, comm, g, plan_buckets(ends, 40, 120), true);
        reducer.begin({}, GradientReducer::Clock::now());
        reducer.finish();  // the last all-reduce is running: no error yet
        comm.release(/*fail=*/true);
        QVERIFY_THROWS_EXCEPTION(comm::Aborted, reducer.complete());
    }
};

QTEST_APPLESS_MAIN(GradientReducerTest)
#include "test_gradient_reducer.moc"
