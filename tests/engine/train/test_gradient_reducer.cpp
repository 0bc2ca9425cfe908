// Bucket plans and the gradient reducer: buckets tile the buffer on parameter boundaries with
// DDP's sizes, and the reducer averages every bucket whether it overlaps backward or not, timing
// each bucket's all-reduce.

#include <QtTest>

#include <chrono>
#include <cmath>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>

#include "backend/cpu/cpu_backend.h"
#include "comm/thread_comm.h"
#include "train/gradient_reducer.h"

using namespace scalelab;

namespace {

// Rank 0 of `size`, whose all_reduce_after takes `wall` on the host, as NCCL's does while its
// stream waits for backward, reports that the all-reduce itself took `measured`, and counts
// its calls.
class FakeComm final : public comm::Communicator {
  public:
    FakeComm(int size, std::chrono::milliseconds wall, double measured)
        : size_(size), wall_(wall), measured_(measured) {}
    int rank() const override { return 0; }
    int size() const override { return size_; }
    double all_reduce_after(Fence& ready, std::span<float>, comm::ReduceOp) override {
        ready.wait();
        std::this_thread::sleep_for(wall_);
        ++calls;
        return measured_;
    }
    void all_reduce(std::span<float>, comm::ReduceOp) override { unused(); }
    void broadcast(std::span<float>, int) override { unused(); }
    void all_gather(std::span<const float>, std::span<float>) override { unused(); }
    void barrier() override { unused(); }
    void abort(const std::string&) override { unused(); }

    int calls = 0;

  private:
    [[noreturn]] static void unused() {
        throw std::logic_error("the gradient reducer only calls all_reduce_after");
    }
    int size_;
    std::chrono::milliseconds wall_;
    double measured_;
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
                finished[std::size_t(r)] =
                    std::chrono::duration<double>(GradientReducer::Clock::now() - step_start)
                        .count();
                spans[std::size_t(r)].assign(reducer.spans().begin(), reducer.spans().end());
            });
        }
        for (auto& t : ranks)
            t.join();
        // One span per bucket, in launch order, inside the step up to finish()'s return.
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
        QCOMPARE(comm.calls, 0);
        QVERIFY(reducer.spans().empty());
        // The step's earlier micro-batches are still added in.
        QCOMPARE(g[0], 2.5f);
        QCOMPARE(g[99], 2.5f);
    }
};

QTEST_APPLESS_MAIN(GradientReducerTest)
#include "test_gradient_reducer.moc"
