#include <QtTest>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collective_input.h"
#include "comm/thread_comm.h"
#include "sanitizers.h"

using namespace scalelab::comm;
using Clock = std::chrono::steady_clock;

namespace {

using Comms = std::vector<std::unique_ptr<ThreadComm>>;

// How one rank's body ended.
struct Outcome {
    enum Kind { Returned, Aborted_, LogicError, OtherError } kind = Returned;
    std::string message;
    double seconds = 0;  // from the start of run_ranks to the end of the body
};

struct RunResult {
    std::vector<Outcome> outcomes;
    bool timed_out = false;  // the watchdog had to abort the group to get the threads back
};

// Runs body(rank, comm) on one thread per rank and joins them all. QTest's checks are not
// thread-safe, so the bodies only compute and the test checks afterwards. A watchdog aborts
// the group after `limit`, so a deadlock fails the test instead of hanging it.
RunResult run_ranks(Comms& comms, const std::function<void(int, ThreadComm&)>& body,
                    std::chrono::milliseconds limit = std::chrono::seconds(60)) {
    const int n = static_cast<int>(comms.size());
    RunResult result;
    result.outcomes.resize(comms.size());
    std::mutex mutex;
    std::condition_variable done_cv;
    int done = 0;
    const auto start = Clock::now();
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            Outcome& outcome = result.outcomes[static_cast<std::size_t>(r)];
            try {
                body(r, *comms[static_cast<std::size_t>(r)]);
            } catch (const Aborted& e) {
                outcome = {Outcome::Aborted_, e.what(), 0};
            } catch (const std::logic_error& e) {
                outcome = {Outcome::LogicError, e.what(), 0};
            } catch (const std::exception& e) {
                outcome = {Outcome::OtherError, e.what(), 0};
            }
            outcome.seconds = std::chrono::duration<double>(Clock::now() - start).count();
            std::lock_guard lock(mutex);
            ++done;
            done_cv.notify_all();
        });
    }
    {
        std::unique_lock lock(mutex);
        if (!done_cv.wait_for(lock, limit, [&] { return done == n; })) {
            result.timed_out = true;
            comms.front()->group()->abort("test watchdog: the ranks did not finish in time");
        }
    }
    for (std::thread& t : threads)
        t.join();
    return result;
}

bool all_returned(const RunResult& result, QString& why) {
    if (result.timed_out) {
        why = "timed out";
        return false;
    }
    for (std::size_t r = 0; r < result.outcomes.size(); ++r)
        if (result.outcomes[r].kind != Outcome::Returned) {
            why = QString("rank %1 threw: %2").arg(r).arg(result.outcomes[r].message.c_str());
            return false;
        }
    return true;
}

#define QVERIFY_RETURNED(result)                                \
    do {                                                        \
        QString why_;                                           \
        QVERIFY2(all_returned(result, why_), qPrintable(why_)); \
    } while (false)

using scalelab::testing::collective_input;

void fill_input(std::vector<float>& buffer, int rank) {
    scalelab::testing::fill_collective_input(buffer, rank);
}

// Floats: all_reduce reduces its slices in chunks of 4096, so at every group size each rank's
// slice spans several chunks (the last one partial where the group size does not divide it).
// Under a sanitizer, where every access costs more (all_gather of 2^20 floats on 8 ranks: 20 s
// under TSan; ASan also checks this test's own code at -O0), 2^16 still gives each of 8 ranks
// two chunks; the synchronisation and the bounds checked do not depend on the size.
const std::size_t large = std::size_t{1}
                          << (scalelab::testing::address_or_thread_sanitizer ? 16 : 20);

// A device that writes `values` into `data` only once its fence is waited for: an all-reduce
// that started before the wait would reduce the zeros it started with.
class WritingFence final : public scalelab::Fence {
  public:
    WritingFence(std::vector<float> values, std::span<float> data)
        : values_(std::move(values)), data_(data) {}
    void mark() override {}
    void wait() override {
        std::copy(values_.begin(), values_.end(), data_.begin());
        ++waits;
    }
    int waits = 0;

  private:
    std::vector<float> values_;
    std::span<float> data_;
};

}  // namespace

class TestThreadComm : public QObject {
    Q_OBJECT

  private slots:
    void slices_cover_the_buffer_aligned_and_disjoint() {
        for (int n_ranks = 1; n_ranks <= 16; ++n_ranks) {
            for (std::size_t n : {0, 1, 7, 15, 16, 17, 1000, 4097, 1 << 20}) {
                std::size_t next = 0;
                for (int r = 0; r < n_ranks; ++r) {
                    const Slice s = slice_of(n, n_ranks, r);
                    QCOMPARE(s.begin, next);
                    QVERIFY(s.end >= s.begin);
                    QVERIFY(s.begin % 16 == 0 || s.begin == n);
                    next = s.end;
                }
                QCOMPARE(next, n);
            }
        }
    }

    void all_reduce_data() {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<qulonglong>("size");
        QTest::addColumn<bool>("average");
        for (int n = 1; n <= 8; ++n)
            for (qulonglong size : {0ull, 1ull, 7ull, 1000ull, qulonglong(large)})
                for (bool average : {false, true})
                    QTest::addRow("N=%d n=%llu %s", n, size, average ? "avg" : "sum")
                        << n << size << average;
    }
    void all_reduce() {
        QFETCH(int, ranks);
        QFETCH(qulonglong, size);
        QFETCH(bool, average);
        const ReduceOp op = average ? ReduceOp::Average : ReduceOp::Sum;
        Comms comms = make_thread_comms(ranks);
        std::vector<std::vector<float>> first(static_cast<std::size_t>(ranks));
        std::vector<std::vector<float>> second(static_cast<std::size_t>(ranks));
        const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
            std::vector<float>& a = first[static_cast<std::size_t>(rank)];
            std::vector<float>& b = second[static_cast<std::size_t>(rank)];
            a.resize(size);
            fill_input(a, rank);
            comm.all_reduce(a, op);
            b.resize(size);
            fill_input(b, rank);
            comm.all_reduce(b, op);
        });
        QVERIFY_RETURNED(run);

        const float scale = 1.0f / static_cast<float>(ranks);
        for (std::size_t i = 0; i < size; ++i) {
            // Independently, in double: the exact sum up to rounding.
            double sum = 0, magnitude = 0;
            // The documented formula, in float: sum in rank order, then * (1.0f / N).
            float formula = collective_input(0, i);
            for (int r = 0; r < ranks; ++r) {
                sum += collective_input(r, i);
                magnitude += std::abs(static_cast<double>(collective_input(r, i)));
                if (r > 0)
                    formula = formula + collective_input(r, i);
            }
            if (average) {
                sum /= ranks;
                magnitude /= ranks;
                formula = formula * scale;
            }
            const float got = first[0][i];
            if (std::abs(got - sum) > 1e-6 * magnitude + 1e-6)
                QFAIL(qPrintable(QString("element %1: got %2, expected %3")
                                     .arg(i)
                                     .arg(got, 0, 'g', 9)
                                     .arg(sum, 0, 'g', 9)));
            if (std::memcmp(&got, &formula, sizeof got) != 0)
                QFAIL(qPrintable(QString("element %1: got %2, the rank-order formula gives %3")
                                     .arg(i)
                                     .arg(got, 0, 'g', 9)
                                     .arg(formula, 0, 'g', 9)));
        }
        const std::size_t bytes = size * sizeof(float);
        for (int r = 0; r < ranks; ++r) {
            const std::size_t ur = static_cast<std::size_t>(r);
            QVERIFY2(bytes == 0 || std::memcmp(first[ur].data(), first[0].data(), bytes) == 0,
                     qPrintable(QString("rank %1 differs from rank 0").arg(r)));
            QVERIFY2(bytes == 0 || std::memcmp(second[ur].data(), first[ur].data(), bytes) == 0,
                     qPrintable(QString("rank %1: the second run differs from the first").arg(r)));
        }
    }

    void all_reduce_is_identical_between_groups() {
        // Run after run (a new group, new threads, other timing): the same bits.
        const int ranks = 5;
        std::vector<std::vector<float>> results;
        for (int run = 0; run < 3; ++run) {
            Comms comms = make_thread_comms(ranks);
            std::vector<std::vector<float>> buffers(ranks, std::vector<float>(large));
            const RunResult result = run_ranks(comms, [&](int rank, ThreadComm& comm) {
                fill_input(buffers[static_cast<std::size_t>(rank)], rank);
                comm.all_reduce(buffers[static_cast<std::size_t>(rank)], ReduceOp::Average);
            });
            QVERIFY_RETURNED(result);
            results.push_back(buffers[static_cast<std::size_t>(run % ranks)]);
        }
        for (const std::vector<float>& r : results)
            QVERIFY(std::memcmp(r.data(), results[0].data(), large * sizeof(float)) == 0);
    }

    void broadcast_data() {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<qulonglong>("size");
        for (int n = 1; n <= 8; ++n)
            for (qulonglong size : {0ull, 1ull, 7ull, 1000ull, qulonglong(large)})
                QTest::addRow("N=%d n=%llu", n, size) << n << size;
    }
    void broadcast() {
        QFETCH(int, ranks);
        QFETCH(qulonglong, size);
        Comms comms = make_thread_comms(ranks);
        std::vector<std::vector<float>> buffers(static_cast<std::size_t>(ranks),
                                                std::vector<float>(size));
        for (int root = 0; root < ranks; ++root) {
            const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
                fill_input(buffers[static_cast<std::size_t>(rank)], rank);
                comm.broadcast(buffers[static_cast<std::size_t>(rank)], root);
            });
            QVERIFY_RETURNED(run);
            std::vector<float> expected(size);
            fill_input(expected, root);
            for (int r = 0; r < ranks; ++r)
                QVERIFY2(size == 0 || std::memcmp(buffers[static_cast<std::size_t>(r)].data(),
                                                  expected.data(), size * sizeof(float)) == 0,
                         qPrintable(QString("root %1: rank %2 differs").arg(root).arg(r)));
        }
    }

    void all_gather_data() { broadcast_data(); }
    void all_gather() {
        QFETCH(int, ranks);
        QFETCH(qulonglong, size);
        Comms comms = make_thread_comms(ranks);
        const std::size_t total = size * static_cast<std::size_t>(ranks);
        std::vector<float> expected(total);
        for (int r = 0; r < ranks; ++r)
            for (std::size_t i = 0; i < size; ++i)
                expected[static_cast<std::size_t>(r) * size + i] = collective_input(r, i);

        for (bool in_place : {false, true}) {
            std::vector<std::vector<float>> outs(static_cast<std::size_t>(ranks),
                                                 std::vector<float>(total, -1.0f));
            const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
                std::vector<float>& out = outs[static_cast<std::size_t>(rank)];
                std::vector<float> in(size);
                fill_input(in, rank);
                if (in_place) {
                    // NCCL's in-place convention: the input is this rank's part of the output.
                    float* mine = out.data() + static_cast<std::size_t>(rank) * size;
                    std::copy(in.begin(), in.end(), mine);
                    comm.all_gather(std::span<const float>(mine, size), out);
                } else {
                    comm.all_gather(in, out);
                }
            });
            QVERIFY_RETURNED(run);
            for (int r = 0; r < ranks; ++r)
                QVERIFY2(
                    total == 0 || std::memcmp(outs[static_cast<std::size_t>(r)].data(),
                                              expected.data(), total * sizeof(float)) == 0,
                    qPrintable(QString("rank %1 differs (in place: %2)").arg(r).arg(in_place)));
        }
    }

    void barrier_holds_every_rank_until_all_arrive() {
        for (int ranks : {2, 3, 8}) {
            Comms comms = make_thread_comms(ranks);
            std::atomic<int> arrived{0};
            std::atomic<int> early{0};
            const int rounds = 300;
            const RunResult run = run_ranks(comms, [&](int, ThreadComm& comm) {
                for (int round = 1; round <= rounds; ++round) {
                    arrived.fetch_add(1);
                    comm.barrier();
                    if (arrived.load() < round * ranks)
                        early.fetch_add(1);
                    comm.barrier();  // nobody starts the next round before all have checked
                }
            });
            QVERIFY_RETURNED(run);
            QCOMPARE(early.load(), 0);
            QCOMPARE(arrived.load(), rounds * ranks);
        }
    }

    void mixed_collectives_in_a_row() {
        // Many small collectives back to back: the barrier generations and slots are reused
        // while other ranks may still be leaving the previous call.
        const int ranks = 4;
        Comms comms = make_thread_comms(ranks);
        std::vector<int> mismatches(ranks, 0);
        const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
            std::vector<float> data(37), gathered(37 * ranks);
            for (int it = 0; it < 500; ++it) {
                std::fill(data.begin(), data.end(), static_cast<float>(rank + it));
                comm.all_reduce(data, ReduceOp::Sum);
                // 0 + 1 + 2 + 3 + 4 * it
                if (data[36] != static_cast<float>(6 + 4 * it))
                    ++mismatches[static_cast<std::size_t>(rank)];
                std::fill(data.begin(), data.end(), static_cast<float>(rank));
                comm.broadcast(data, it % ranks);
                if (data[0] != static_cast<float>(it % ranks))
                    ++mismatches[static_cast<std::size_t>(rank)];
                comm.all_gather(std::span<const float>(data.data(), 1),
                                std::span<float>(gathered.data(), ranks));
                if (gathered[static_cast<std::size_t>(ranks - 1)] != static_cast<float>(it % ranks))
                    ++mismatches[static_cast<std::size_t>(rank)];
            }
        });
        QVERIFY_RETURNED(run);
        for (int m : mismatches)
            QCOMPARE(m, 0);
    }

    void all_reduce_after_reduces_what_the_fence_waited_for() {
        const int ranks = 3;
        const std::size_t n = 1001;
        Comms comms = make_thread_comms(ranks);
        std::vector<std::vector<float>> results(ranks);
        std::vector<int> waits(ranks);
        std::vector<double> seconds(ranks);
        const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
            std::vector<float> data(n, 0.0f), values(n);
            fill_input(values, rank);
            WritingFence written(values, data);
            seconds[std::size_t(rank)] = comm.all_reduce_after(written, data, ReduceOp::Sum);
            results[std::size_t(rank)] = data;
            waits[std::size_t(rank)] = written.waits;
        });
        QVERIFY_RETURNED(run);
        // The same sum all_reduce gives for the written values.
        Comms reference_comms = make_thread_comms(ranks);
        std::vector<std::vector<float>> expected(ranks, std::vector<float>(n));
        QVERIFY_RETURNED(run_ranks(reference_comms, [&](int rank, ThreadComm& comm) {
            fill_input(expected[std::size_t(rank)], rank);
            comm.all_reduce(expected[std::size_t(rank)], ReduceOp::Sum);
        }));
        for (int r = 0; r < ranks; ++r) {
            QCOMPARE(waits[std::size_t(r)], 1);
            QVERIFY2(results[std::size_t(r)] == expected[0], qPrintable(QString("rank %1").arg(r)));
            QVERIFY(seconds[std::size_t(r)] >= 0 && seconds[std::size_t(r)] < 60);
        }
    }

    void one_rank_is_a_no_op() {
        Comms comms = make_thread_comms(1);
        ThreadComm& comm = *comms[0];
        QCOMPARE(comm.size(), 1);
        std::vector<float> data(1000);
        fill_input(data, 0);
        const std::vector<float> original = data;
        comm.all_reduce(data, ReduceOp::Sum);
        comm.all_reduce(data, ReduceOp::Average);
        comm.broadcast(data, 0);
        comm.barrier();
        QVERIFY(data == original);
        std::vector<float> out(1000);
        comm.all_gather(data, out);
        QVERIFY(out == original);
        QVERIFY_THROWS_EXCEPTION(std::logic_error, comm.broadcast(data, 1));
        comm.abort("done");
        QVERIFY_THROWS_EXCEPTION(Aborted, comm.all_reduce(data, ReduceOp::Sum));
        QVERIFY_THROWS_EXCEPTION(Aborted, comm.barrier());
    }

    void bad_group_or_rank_is_rejected() {
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, ThreadGroup::create(0));
        std::shared_ptr<ThreadGroup> group = ThreadGroup::create(2);
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, group->communicator(2));
        QVERIFY_THROWS_EXCEPTION(std::invalid_argument, group->communicator(-1));
    }

    void mismatched_sizes_throw_logic_error_on_every_rank() {
        const int ranks = 3;
        Comms comms = make_thread_comms(ranks);
        const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
            std::vector<float> data(rank == 2 ? 99 : 100);
            comm.all_reduce(data, ReduceOp::Sum);
        });
        QVERIFY(!run.timed_out);
        for (const Outcome& o : run.outcomes) {
            QCOMPARE(o.kind, Outcome::LogicError);
            QVERIFY2(o.message.find("rank 2") != std::string::npos &&
                         o.message.find("99") != std::string::npos,
                     o.message.c_str());
        }
        // The group is over: every later call throws Aborted with the same message.
        const RunResult later = run_ranks(comms, [&](int, ThreadComm& comm) { comm.barrier(); });
        for (const Outcome& o : later.outcomes) {
            QCOMPARE(o.kind, Outcome::Aborted_);
            QCOMPARE(o.message, run.outcomes[0].message);
        }
    }

    void mismatched_collectives_throw() {
        Comms comms = make_thread_comms(2);
        const RunResult run = run_ranks(comms, [&](int rank, ThreadComm& comm) {
            std::vector<float> data(8);
            if (rank == 0)
                comm.all_reduce(data, ReduceOp::Sum);
            else
                comm.broadcast(data, 0);
        });
        QVERIFY(!run.timed_out);
        for (const Outcome& o : run.outcomes)
            QCOMPARE(o.kind, Outcome::LogicError);

        Comms gather = make_thread_comms(2);
        const RunResult bad_out = run_ranks(gather, [&](int, ThreadComm& comm) {
            std::vector<float> in(4), out(7);
            comm.all_gather(in, out);
        });
        QVERIFY(!bad_out.timed_out);
        for (const Outcome& o : bad_out.outcomes)
            QCOMPARE(o.kind, Outcome::LogicError);
    }

    void abort_data() {
        QTest::addColumn<int>("ranks");
        QTest::addColumn<QString>("where");
        for (int n : {2, 3, 8})
            for (const char* where : {"barrier", "all_reduce", "broadcast", "all_gather"})
                QTest::addRow("N=%d %s", n, where) << n << QString(where);
    }
    void abort() {
        // All ranks but the last wait in a collective that the last never joins; a third
        // thread aborts. Every waiter throws Aborted with the first reason, promptly.
        QFETCH(int, ranks);
        QFETCH(QString, where);
        Comms comms = make_thread_comms(ranks);
        std::shared_ptr<ThreadGroup> group = comms[0]->group();
        std::atomic<bool> last_rank_may_go{false};
        std::thread aborter([&] {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            group->abort("stopped by the test");
            group->abort("a second reason, ignored");
            last_rank_may_go = true;
        });
        const auto start = Clock::now();
        const RunResult run = run_ranks(
            comms,
            [&](int rank, ThreadComm& comm) {
                std::vector<float> data(1000), out(1000 * ranks);
                if (rank == ranks - 1) {
                    while (!last_rank_may_go)
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                }
                if (where == "barrier")
                    comm.barrier();
                else if (where == "all_reduce")
                    comm.all_reduce(data, ReduceOp::Average);
                else if (where == "broadcast")
                    comm.broadcast(data, 0);
                else
                    comm.all_gather(data, out);
            },
            std::chrono::seconds(10));
        aborter.join();
        const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
        QVERIFY(!run.timed_out);
        QVERIFY2(elapsed < 2.0, qPrintable(QString("took %1 s").arg(elapsed)));
        for (const Outcome& o : run.outcomes) {
            QCOMPARE(o.kind, Outcome::Aborted_);
            QCOMPARE(o.message, std::string("stopped by the test"));
        }
        // After abort, every new call throws at once.
        const RunResult later = run_ranks(comms, [&](int, ThreadComm& comm) {
            std::vector<float> data(10);
            comm.all_reduce(data, ReduceOp::Sum);
        });
        QVERIFY(!later.timed_out);
        for (const Outcome& o : later.outcomes)
            QCOMPARE(o.kind, Outcome::Aborted_);
        QVERIFY(group->aborted());
    }

    void a_failing_rank_releases_the_others_through_abort() {
        // As the trainer does: a rank that fails calls abort on its own communicator; the
        // ranks busy in a long run of all-reduces all stop with its reason.
        const int ranks = 4;
        Comms comms = make_thread_comms(ranks);
        const RunResult run = run_ranks(
            comms,
            [&](int rank, ThreadComm& comm) {
                std::vector<float> data(large / 4);
                for (int step = 0;; ++step) {
                    if (rank == 2 && step == 20) {
                        comm.abort("rank 2 failed at step 20");
                        throw std::runtime_error("rank 2 failed");
                    }
                    comm.all_reduce(data, ReduceOp::Average);
                }
            },
            std::chrono::seconds(10));
        QVERIFY(!run.timed_out);
        for (int r = 0; r < ranks; ++r) {
            const Outcome& o = run.outcomes[static_cast<std::size_t>(r)];
            if (r == 2) {
                QCOMPARE(o.kind, Outcome::OtherError);
            } else {
                QCOMPARE(o.kind, Outcome::Aborted_);
                QCOMPARE(o.message, std::string("rank 2 failed at step 20"));
            }
        }
    }
};

QTEST_APPLESS_MAIN(TestThreadComm)
#include "test_thread_comm.moc"
