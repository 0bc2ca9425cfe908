// HierarchicalComm: P processes x D local ranks as one group of P*D, with the processes
// simulated by threads (ThreadProcesses: a ThreadComm of P ranks stands for MPI), so that the
// three steps, the global ranks and the failure path are checked without an MPI launcher.
// tests/engine/comm/mpi/ runs the same collectives over real MPI processes.

#include <QtTest>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <vector>

#include "collective_input.h"
#include "comm/hierarchical_comm.h"
#include "comm/thread_comm.h"
#include "thread_processes.h"

using namespace scalelab::comm;
using scalelab::testing::collective_input;

namespace {

// P x D ranks, each with its HierarchicalComm, by global rank.
struct Layout {
    int processes = 1;
    int local = 1;
    std::vector<std::unique_ptr<HierarchicalComm>> comms;

    Layout(int p, int d, int failing_process = -1) : processes(p), local(d) {
        const auto across = ThreadGroup::create(p);
        for (int process = 0; process < p; ++process) {
            auto group = std::make_shared<scalelab::testing::ThreadProcesses>(
                across->communicator(process), process == failing_process);
            const auto inside = ThreadGroup::create(d);
            for (int rank = 0; rank < d; ++rank)
                comms.push_back(
                    std::make_unique<HierarchicalComm>(inside->communicator(rank), group));
        }
    }
};

// Runs body(global rank) on one thread per rank; the messages of what each threw, by rank.
std::vector<std::string> run(Layout& layout, const std::function<void(int)>& body) {
    std::vector<std::string> thrown(layout.comms.size());
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < layout.comms.size(); ++r)
        threads.emplace_back([&, r] {
            try {
                body(int(r));
            } catch (const std::exception& error) {
                thrown[r] = error.what();
            }
        });
    for (std::thread& thread : threads)
        thread.join();
    return thrown;
}

// Every rank's all-reduced buffer of `n` collective inputs.
std::vector<std::vector<float>> reduced(Layout& layout, std::size_t n, ReduceOp op) {
    std::vector<std::vector<float>> buffers(layout.comms.size(), std::vector<float>(n));
    const auto thrown = run(layout, [&](int rank) {
        scalelab::testing::fill_collective_input(buffers[std::size_t(rank)], rank);
        layout.comms[std::size_t(rank)]->all_reduce(buffers[std::size_t(rank)], op);
    });
    for (const std::string& message : thrown)
        if (!message.empty())
            throw std::runtime_error(message);
    return buffers;
}

}  // namespace

class TestHierarchicalComm : public QObject {
    Q_OBJECT

  private slots:
    void globalRanksArePtimesDplusLocal() {
        Layout layout(3, 2);
        for (std::size_t r = 0; r < layout.comms.size(); ++r) {
            QCOMPARE(layout.comms[r]->rank(), int(r));
            QCOMPARE(layout.comms[r]->size(), 6);
            QCOMPARE(layout.comms[r]->process(), int(r) / 2);
            QCOMPARE(layout.comms[r]->local_rank(), int(r) % 2);
        }
    }

    void allReduceIsTheSumOfEveryRankOnEveryRank_data() {
        QTest::addColumn<int>("processes");
        QTest::addColumn<int>("local");
        QTest::addColumn<int>("n");
        for (const int n : {1, 17, 4099, 100003}) {
            QTest::addRow("2x2, %d floats", n) << 2 << 2 << n;
            QTest::addRow("3x2, %d floats", n) << 3 << 2 << n;
            QTest::addRow("2x3, %d floats", n) << 2 << 3 << n;
        }
    }

    void allReduceIsTheSumOfEveryRankOnEveryRank() {
        QFETCH(int, processes);
        QFETCH(int, local);
        QFETCH(int, n);
        for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Average}) {
            Layout layout(processes, local);
            const auto buffers = reduced(layout, std::size_t(n), op);
            const int ranks = processes * local;
            for (std::size_t i = 0; i < std::size_t(n); ++i) {
                // Each process's local sum in rank order, then those in process order.
                float total = 0.0F;
                double magnitude = 0.0;
                for (int p = 0; p < processes; ++p) {
                    float partial = collective_input(p * local, i);
                    for (int l = 1; l < local; ++l)
                        partial = partial + collective_input(p * local + l, i);
                    total = p == 0 ? partial : total + partial;
                    for (int l = 0; l < local; ++l)
                        magnitude += std::abs(double(collective_input(p * local + l, i)));
                }
                const float expected = op == ReduceOp::Sum ? total : total * (1.0F / float(ranks));
                const float got = buffers[0][i];
                QVERIFY2(std::abs(double(got) - double(expected)) <=
                             1e-6 * (op == ReduceOp::Sum ? magnitude : magnitude / ranks),
                         qPrintable(QStringLiteral("element %1: %2, expected %3")
                                        .arg(i)
                                        .arg(got)
                                        .arg(expected)));
                for (int r = 1; r < ranks; ++r)  // the same bits on every rank
                    QCOMPARE(buffers[std::size_t(r)][i], got);
            }
        }
    }

    // The two layouts of 4 ranks agree to float rounding (the additions are grouped apart).
    void twoByTwoAgreesWithOneByFour() {
        Layout two_by_two(2, 2);
        Layout one_by_four(1, 4);
        const std::size_t n = 100003;
        const auto a = reduced(two_by_two, n, ReduceOp::Average);
        const auto b = reduced(one_by_four, n, ReduceOp::Average);
        for (std::size_t i = 0; i < n; ++i)
            QVERIFY2(std::abs(a[0][i] - b[0][i]) <= 1e-5F * std::max(1.0F, std::abs(b[0][i])),
                     qPrintable(QString::number(i)));
    }

    void broadcastFromEveryGlobalRoot() {
        Layout layout(2, 3);
        for (int root = 0; root < 6; ++root) {
            std::vector<std::vector<float>> buffers(6, std::vector<float>(33));
            const auto thrown = run(layout, [&](int rank) {
                scalelab::testing::fill_collective_input(buffers[std::size_t(rank)], rank);
                layout.comms[std::size_t(rank)]->broadcast(buffers[std::size_t(rank)], root);
            });
            for (std::size_t r = 0; r < 6; ++r) {
                QVERIFY2(thrown[r].empty(), thrown[r].c_str());
                for (std::size_t i = 0; i < 33; ++i)
                    QCOMPARE(buffers[r][i], collective_input(root, i));
            }
        }
    }

    void allGatherIsInGlobalRankOrder() {
        Layout layout(3, 2);
        const std::size_t n = 5;
        std::vector<std::vector<float>> outs(6, std::vector<float>(6 * n));
        const auto thrown = run(layout, [&](int rank) {
            std::vector<float> in(n);
            scalelab::testing::fill_collective_input(in, rank);
            layout.comms[std::size_t(rank)]->all_gather(in, outs[std::size_t(rank)]);
        });
        for (std::size_t r = 0; r < 6; ++r) {
            QVERIFY2(thrown[r].empty(), thrown[r].c_str());
            for (int from = 0; from < 6; ++from)
                for (std::size_t i = 0; i < n; ++i)
                    QCOMPARE(outs[r][std::size_t(from) * n + i], collective_input(from, i));
        }
    }

    // A process whose exchange fails: every rank of every process ends with its message, none
    // waits for ever.
    void aFailedExchangeEndsEveryLocalRank() {
        Layout layout(2, 2, /*failing_process=*/1);
        std::vector<std::vector<float>> buffers(4, std::vector<float>(64));
        const auto thrown = run(layout, [&](int rank) {
            layout.comms[std::size_t(rank)]->all_reduce(buffers[std::size_t(rank)], ReduceOp::Sum);
        });
        for (std::size_t r = 0; r < 4; ++r)
            QVERIFY2(thrown[r].find("process 1: link down") != std::string::npos,
                     thrown[r].c_str());
    }

    // Process 1 has stopped calling (its ranks never join): an abort on one of process 0's
    // ranks releases both of them, the one waiting across processes included, at once rather
    // than at the collective timeout.
    void anAbortReleasesTheRankWaitingAcrossProcesses() {
        Layout layout(2, 2);
        std::vector<std::vector<float>> buffers(2, std::vector<float>(64));
        std::vector<std::string> thrown(2);
        std::vector<std::thread> process0;
        for (std::size_t r = 0; r < 2; ++r)
            process0.emplace_back([&, r] {
                try {
                    layout.comms[r]->all_reduce(buffers[r], ReduceOp::Sum);
                } catch (const Aborted& aborted) {
                    thrown[r] = aborted.what();
                }
            });
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        layout.comms[1]->abort("cancelled");
        for (std::thread& thread : process0)
            thread.join();
        QCOMPARE(thrown, std::vector<std::string>({"cancelled", "cancelled"}));
    }

    // The time between processes is step 2's, on the rank that makes it (local rank 0).
    void onlyLocalRankZeroSpendsTimeBetweenProcesses() {
        Layout layout(2, 2);
        for (const auto& comm : layout.comms)
            QCOMPARE(comm->seconds_between_processes(), 0.0);
        reduced(layout, 1 << 16, ReduceOp::Sum);
        for (std::size_t r = 0; r < 4; ++r) {
            const double seconds = layout.comms[r]->seconds_between_processes();
            QVERIFY2(r % 2 == 0 ? seconds > 0 : seconds == 0, qPrintable(QString::number(seconds)));
        }
    }

    // Process 0's bytes (an NCCL id has zeros in it) reach every process; only process 0 makes
    // them.
    void whatProcess0MakesReachesEveryProcess() {
        const auto across = ThreadGroup::create(3);
        const std::string id("\x01\x00\xff id\x00", 7);
        std::vector<std::string> received(3);
        std::atomic<int> made{0};
        std::vector<std::thread> processes;
        for (int p = 0; p < 3; ++p)
            processes.emplace_back([&, p] {
                scalelab::testing::ThreadProcesses group(across->communicator(p));
                received[std::size_t(p)] = made_by_process_0(group, [&] {
                    ++made;
                    return p == 0 ? id : std::string("not process 0");
                });
            });
        for (std::thread& thread : processes)
            thread.join();
        QCOMPARE(made.load(), 1);
        QCOMPARE(received, std::vector<std::string>(3, id));
    }

    // This process alone: an abort makes its collectives, and its duplicates', throw.
    void aLoneProcessAbortedThrows() {
        const std::unique_ptr<ProcessGroup> alone = single_process();
        const std::unique_ptr<ProcessGroup> copy = alone->duplicate();
        std::vector<float> data(4, 1.0F);
        alone->all_reduce_sum(data);
        QCOMPARE(data, std::vector<float>(4, 1.0F));
        alone->abort("cancelled");
        QVERIFY_THROWS_EXCEPTION(Aborted, alone->all_reduce_sum(data));
        QVERIFY_THROWS_EXCEPTION(Aborted, copy->barrier());
    }
};

QTEST_MAIN(TestHierarchicalComm)
#include "test_hierarchical_comm.moc"
