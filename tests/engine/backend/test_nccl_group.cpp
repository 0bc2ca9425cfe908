// The NCCL group of the CUDA backend (make_gpu_group) and the GPU all-reduce benchmark: what is
// refused before any GPU is touched (runs everywhere), and the collectives, abort and timeout
// over every GPU present (skip where there is none, or too few).

#include <QtTest>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <future>
#include <latch>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend/device_inventory.h"
#include "backend/gpu_runtime.h"
#include "comm/communicator.h"
#include "error.h"
#include "gpu_test_support.h"

using scalelab::Error;
using scalelab::ErrorKind;
using scalelab::GpuGroup;
using scalelab::GpuGroupOptions;
using scalelab::comm::Communicator;
using scalelab::comm::ReduceOp;
using scalelab::testing::random_values;
using scalelab::testing::relative_error;
using scalelab::testing::to_device;
using scalelab::testing::to_host;

namespace {

// The error `call` throws; Internal with "nothing thrown" when it throws none.
Error error_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& error) {
        return error;
    }
    return Error(ErrorKind::Internal, "nothing thrown");
}

std::vector<int> present_gpus() {
    std::vector<int> gpus;
    for (const scalelab::GpuDescription& gpu : scalelab::discover_devices().gpus)
        gpus.push_back(gpu.index);
    return gpus;
}

// Runs work(rank) on one thread per rank, each with a backend on its rank's GPU (created,
// used and destroyed on that thread), and rethrows the first exception a rank threw. A rank
// that fails aborts the group, so that the others do not wait for it until the timeout.
void run_ranks(const std::vector<int>& gpus, GpuGroup& group,
               const std::function<void(int rank, scalelab::Backend& backend)>& work) {
    std::vector<std::exception_ptr> failures(gpus.size());
    std::vector<std::thread> threads;
    for (std::size_t r = 0; r < gpus.size(); ++r)
        threads.emplace_back([&, r] {
            try {
                const std::unique_ptr<scalelab::Backend> backend =
                    scalelab::make_gpu_backend({.gpu = gpus[r]});
                work(static_cast<int>(r), *backend);
            } catch (...) {
                failures[r] = std::current_exception();
                group.abort("rank " + std::to_string(r) + " of the test failed");
            }
        });
    for (std::thread& thread : threads)
        thread.join();
    for (const std::exception_ptr& failure : failures)
        if (failure)
            std::rethrow_exception(failure);
}

// Rank-dependent values: rank r's buffer, the same for the same r.
std::vector<float> rank_values(std::size_t n, int rank) {
    return random_values(n, 1000u + static_cast<std::uint32_t>(rank));
}

// The sum over `ranks` ranks of their rank_values, computed on the host in double, or the
// average.
std::vector<float> rank_sums(std::size_t n, std::size_t ranks, bool average = false) {
    std::vector<double> sums(n, 0.0);
    for (std::size_t r = 0; r < ranks; ++r) {
        const std::vector<float> values = rank_values(n, static_cast<int>(r));
        for (std::size_t i = 0; i < n; ++i)
            sums[i] += values[i];
    }
    std::vector<float> expected(n);
    for (std::size_t i = 0; i < n; ++i)
        expected[i] = static_cast<float>(average ? sums[i] / double(ranks) : sums[i]);
    return expected;
}

// Rank 0 of a group of two or more enters a collective that no other rank joins; `stop` ends
// it (from this thread) 200 ms after rank 0 entered it, or nothing does when `stop` is empty.
// Returns what rank 0's all_reduce threw ("" when nothing), after at most 60 s of waiting for
// it; waited_s: from entering the all_reduce to its end.
QString lone_all_reduce(const std::vector<int>& gpus, double timeout_seconds,
                        const std::function<void(GpuGroup&)>& stop, double* waited_s) {
    const std::shared_ptr<GpuGroup> group =
        scalelab::make_gpu_group({.gpus = gpus, .timeout_seconds = timeout_seconds});
    std::promise<QString> outcome;
    std::future<QString> thrown = outcome.get_future();
    std::promise<std::chrono::steady_clock::time_point> entering;
    std::future<std::chrono::steady_clock::time_point> entered = entering.get_future();
    std::thread lone([&] {
        try {
            const std::unique_ptr<scalelab::Backend> backend =
                scalelab::make_gpu_backend({.gpu = gpus[0]});
            const std::unique_ptr<Communicator> comm = group->communicator(0);
            const std::vector<float> host = rank_values(1 << 16, 0);
            scalelab::DeviceBuffer buffer = to_device(*backend, host);
            entering.set_value(std::chrono::steady_clock::now());
            comm->all_reduce({buffer.data(), host.size()}, ReduceOp::Sum);
            outcome.set_value({});
        } catch (const scalelab::comm::Aborted& aborted) {
            outcome.set_value(QString("Aborted: ") + aborted.what());
        } catch (const std::exception& other) {
            outcome.set_value(QString("other: ") + other.what());
        }
    });
    if (entered.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        lone.join();
        return "rank 0 did not reach its all_reduce: " + thrown.get();
    }
    const auto start = entered.get();
    if (stop) {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        stop(*group);
    }
    if (thrown.wait_for(std::chrono::seconds(60)) != std::future_status::ready) {
        lone.detach();  // the test fails; the process ends with it
        return "rank 0 still waits after 60 s";
    }
    *waited_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    lone.join();
    // Every later collective of any rank throws the same.
    try {
        group->communicator(1)->barrier();
        return "a barrier after the abort returned";
    } catch (const scalelab::comm::Aborted&) {
    }
    return thrown.get();
}

}  // namespace

class TestNcclGroup : public QObject {
    Q_OBJECT

  private slots:
    // ---- refused before any GPU is touched: runs in every build with the CUDA backend ----

    void an_empty_gpu_list_is_refused() {
        SCALELAB_SKIP_WITHOUT_CUDA_BACKEND();
        const Error error = error_of([] { scalelab::make_gpu_group({}); });
        QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error.what()).contains("at least one GPU"), error.what());
    }

    void a_repeated_gpu_is_refused() {
        SCALELAB_SKIP_WITHOUT_CUDA_BACKEND();
        const Error error = error_of([] { scalelab::make_gpu_group({.gpus = {0, 1, 0}}); });
        QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error.what()).contains("GPU 0 is listed twice"), error.what());
    }

    void a_negative_index_and_a_bad_timeout_are_refused() {
        SCALELAB_SKIP_WITHOUT_CUDA_BACKEND();
        Error error = error_of([] { scalelab::make_gpu_group({.gpus = {-1}}); });
        QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error.what()).contains("GPU -1 is not a GPU index"), error.what());
        error = error_of([] { scalelab::make_gpu_group({.gpus = {0}, .timeout_seconds = 0}); });
        QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error.what()).contains("timeout"), error.what());
    }

    void without_a_gpu_the_group_says_why() {
        SCALELAB_SKIP_WITHOUT_CUDA_BACKEND();
        const scalelab::DeviceInventory inventory = scalelab::discover_devices();
        if (!inventory.gpus.empty())
            QSKIP("this machine has GPUs");
        const Error error = error_of([] { scalelab::make_gpu_group({.gpus = {0}}); });
        QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error.what())
                     .contains("GPU 0 asked for, but no GPU can be used: " +
                               QString::fromStdString(inventory.no_gpu_reason)),
                 error.what());
    }

    void a_gpu_past_the_last_is_refused() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const int past = static_cast<int>(present_gpus().size());
        const Error error = error_of([past] { scalelab::make_gpu_group({.gpus = {past}}); });
        QCOMPARE(error.kind(), ErrorKind::InvalidSpec);
        QVERIFY2(QString(error.what()).contains("this machine has"), error.what());
    }

    void benchmark_arguments_are_checked_first() {
        SCALELAB_SKIP_WITHOUT_CUDA_BACKEND();
        const auto kind = [](std::vector<int> gpus, std::vector<std::size_t> sizes, int iters) {
            return error_of([&] { scalelab::run_gpu_allreduce_benchmark(gpus, sizes, iters); })
                .kind();
        };
        QCOMPARE(kind({0}, {1024}, 0), ErrorKind::InvalidSpec);
        QCOMPARE(kind({0}, {0}, 1), ErrorKind::InvalidSpec);
        QCOMPARE(kind({0}, {3}, 1), ErrorKind::InvalidSpec);
        QCOMPARE(kind({}, {1024}, 1), ErrorKind::InvalidSpec);
        QCOMPARE(kind({0, 0}, {1024}, 1), ErrorKind::InvalidSpec);
        const Error error = error_of([] { scalelab::run_gpu_allreduce_benchmark({0}, {1024}, 0); });
        QVERIFY2(QString(error.what()).contains("at least 1 timed iteration"), error.what());
    }

    // ---- on the GPUs present ----

    void all_reduce_sums_and_averages_over_every_gpu_data() {
        QTest::addColumn<bool>("average");
        QTest::addColumn<int>("floats");
        QTest::newRow("sum, odd size") << false << 1027;
        QTest::newRow("average, odd size") << true << 1027;
        QTest::newRow("sum, 4 MB + 5 floats") << false << (1 << 20) + 5;
        QTest::newRow("average, 4 MB + 5 floats") << true << (1 << 20) + 5;
    }
    void all_reduce_sums_and_averages_over_every_gpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        QFETCH(bool, average);
        QFETCH(int, floats);
        const std::vector<int> gpus = present_gpus();
        const auto n = static_cast<std::size_t>(floats);
        const std::shared_ptr<GpuGroup> group = scalelab::make_gpu_group({.gpus = gpus});
        QCOMPARE(group->size(), static_cast<int>(gpus.size()));
        std::vector<std::vector<float>> results(gpus.size());
        run_ranks(gpus, *group, [&](int rank, scalelab::Backend& backend) {
            const std::unique_ptr<Communicator> comm = group->communicator(rank);
            const std::vector<float> host = rank_values(n, rank);
            scalelab::DeviceBuffer buffer = to_device(backend, host);
            comm->all_reduce({buffer.data(), n}, average ? ReduceOp::Average : ReduceOp::Sum);
            results[static_cast<std::size_t>(rank)] = to_host(backend, buffer.data(), n);
        });
        const std::vector<float> expected = rank_sums(n, gpus.size(), average);
        for (std::size_t r = 0; r < gpus.size(); ++r) {
            const double error = relative_error(results[r], expected);
            QVERIFY2(error < 1e-5, qPrintable(QString("rank %1: %2").arg(r).arg(error)));
            QVERIFY2(results[r] == results[0], "every rank gets the same bits");
        }
    }

    void all_reduce_after_waits_on_the_gpu_for_the_fence() {
        // Each rank gives its compute stream tens of milliseconds of copies, then writes the
        // data last and marks a fence, and calls all_reduce_after at once: the all-reduce must
        // reduce the written data (several GPUs), and must not be complete before the compute
        // stream's work is (any number), while the time it reports leaves that wait out.
        SCALELAB_SKIP_WITHOUT_GPU();
        using Clock = std::chrono::steady_clock;
        using Seconds = std::chrono::duration<double>;
        const std::vector<int> gpus = present_gpus();
        const std::size_t n = 4099;
        const std::shared_ptr<GpuGroup> group = scalelab::make_gpu_group({.gpus = gpus});
        std::vector<std::vector<float>> results(gpus.size());
        std::vector<double> measured(gpus.size()), called(gpus.size()), tail(gpus.size());
        run_ranks(gpus, *group, [&](int rank, scalelab::Backend& backend) {
            const auto r = static_cast<std::size_t>(rank);
            const std::unique_ptr<Communicator> comm = group->communicator(rank);
            const std::size_t big = std::size_t{1} << 26;  // 256 MB: ~0.1 ms a copy
            const scalelab::DeviceBuffer from = backend.allocate(big), to = backend.allocate(big);
            const scalelab::DeviceBuffer written = to_device(backend, rank_values(n, rank));
            const scalelab::DeviceBuffer data = backend.allocate(n);
            const std::unique_ptr<scalelab::Fence> ready = backend.make_fence();
            const auto start = Clock::now();
            for (int i = 0; i < 400; ++i)
                backend.copy(from.span(), to.span());
            backend.copy(written.span(), data.span());
            ready->mark();
            measured[r] = comm->all_reduce_after(*ready, data.span(), ReduceOp::Sum);
            const auto returned = Clock::now();
            const std::unique_ptr<scalelab::Fence> drained_fence = backend.make_fence();
            drained_fence->mark();
            drained_fence->wait();
            const auto drained = Clock::now();
            called[r] = Seconds(returned - start).count();
            tail[r] = Seconds(drained - returned).count();
            results[r] = to_host(backend, data.data(), n);
        });
        const std::vector<float> expected = rank_sums(n, gpus.size());
        for (std::size_t r = 0; r < gpus.size(); ++r) {
            const QString where = QString(
                                      "rank %1: returned after %2 s, then %3 s until the "
                                      "compute stream drained; measured %4 s")
                                      .arg(r)
                                      .arg(called[r])
                                      .arg(tail[r])
                                      .arg(measured[r]);
            QVERIFY2(relative_error(results[r], expected) < 1e-5, qPrintable(where));
            QVERIFY2(tail[r] < 0.05 * (called[r] + tail[r]), qPrintable(where));
            QVERIFY2(measured[r] >= 0 && measured[r] < 0.5 * called[r], qPrintable(where));
        }
    }

    void a_backend_waits_on_the_gpu_for_the_all_reduce_it_follows() {
        // How the optimiser follows the last bucket: rank r's all-reduce follows a fence of a
        // second backend on its GPU (the "backward"), whose stream has tens of milliseconds of
        // copies; the rank's backend waits for the all-reduce's done fence (Backend::wait_for)
        // and copies the result. start_all_reduce_after and wait_for must return at once (the
        // host waits for nothing), the copy must not run before the all-reduce, which runs
        // after the copies (the chain holds on the GPU: on one GPU this is what shows it), and
        // with several GPUs the copy reads the reduced values.
        SCALELAB_SKIP_WITHOUT_GPU();
        using Clock = std::chrono::steady_clock;
        using Seconds = std::chrono::duration<double>;
        const std::vector<int> gpus = present_gpus();
        const std::size_t n = 4099;
        const std::shared_ptr<GpuGroup> group = scalelab::make_gpu_group({.gpus = gpus});
        std::vector<std::vector<float>> results(gpus.size());
        std::vector<double> enqueued(gpus.size()), copied(gpus.size()), backward(gpus.size());
        run_ranks(gpus, *group, [&](int rank, scalelab::Backend& backend) {
            const auto r = static_cast<std::size_t>(rank);
            const std::unique_ptr<Communicator> comm = group->communicator(rank);
            const std::unique_ptr<scalelab::Backend> writer =
                scalelab::make_gpu_backend({.gpu = gpus[r]});
            const std::size_t big = std::size_t{1} << 26;  // 256 MB: ~0.1 ms a copy
            const scalelab::DeviceBuffer from = writer->allocate(big), to = writer->allocate(big);
            const scalelab::DeviceBuffer data = to_device(*writer, rank_values(n, rank));
            const scalelab::DeviceBuffer out = backend.allocate(n);
            const std::unique_ptr<scalelab::Fence> written = writer->make_fence();
            const std::unique_ptr<scalelab::Fence> reduced = comm->make_fence();
            const std::unique_ptr<scalelab::Fence> out_copied = backend.make_fence();
            const std::unique_ptr<scalelab::Fence> idle = backend.make_fence();
            idle->mark();  // allocate's zero-fill of `out` done before the clock starts
            idle->wait();
            const auto start = Clock::now();
            for (int i = 0; i < 400; ++i)
                writer->copy(from.span(), to.span());
            written->mark();
            const bool running =
                !comm->start_all_reduce_after(*written, data.span(), ReduceOp::Sum, reduced.get());
            backend.wait_for(*reduced);
            backend.copy(data.span(), out.span());
            out_copied->mark();
            enqueued[r] = Seconds(Clock::now() - start).count();
            out_copied->wait();
            copied[r] = Seconds(Clock::now() - start).count();
            if (running)
                comm->finish_all_reduce();
            const std::unique_ptr<scalelab::Fence> writer_done = writer->make_fence();
            writer_done->mark();
            writer_done->wait();
            backward[r] = Seconds(Clock::now() - start).count();
            results[r] = to_host(backend, out.data(), n);
        });
        const std::vector<float> expected = rank_sums(n, gpus.size());
        for (std::size_t r = 0; r < gpus.size(); ++r) {
            const QString where = QString(
                                      "rank %1: enqueued in %2 s, the copy of the result done "
                                      "after %3 s, the other stream's copies after %4 s")
                                      .arg(r)
                                      .arg(enqueued[r])
                                      .arg(copied[r])
                                      .arg(backward[r]);
            QVERIFY2(relative_error(results[r], expected) < 1e-5, qPrintable(where));
            // The host enqueued everything well before the copies were done...
            QVERIFY2(enqueued[r] < 0.5 * backward[r], qPrintable(where));
            // ...and the result's copy did not run before them: it followed the all-reduce,
            // which followed them (measured at once after it, so within a few milliseconds).
            QVERIFY2(copied[r] >= 0.9 * backward[r], qPrintable(where));
        }
    }

    void the_timeout_counts_from_the_start_behind_the_fence() {
        // all_reduce_after enqueued behind seconds of copies in a group whose timeout is 1 s:
        // the all-reduce has not started while its stream waits for the fence, so the watchdog
        // must not end the group. Two buffers of an eighth of the smallest GPU's memory each
        // (at most 4 GB: 1.8 ms a copy on an H200; a smaller GPU is slower), 1500 copies.
        SCALELAB_SKIP_WITHOUT_GPU();
        using Clock = std::chrono::steady_clock;
        const double timeout_s = 1.0;
        const std::vector<int> gpus = present_gpus();
        std::uint64_t smallest = UINT64_MAX;
        for (const scalelab::GpuDescription& gpu : scalelab::discover_devices().gpus)
            smallest = std::min(smallest, gpu.memory_bytes);
        const std::size_t big = std::min<std::uint64_t>(smallest / 8, std::uint64_t{4} << 30) / 4;
        const std::shared_ptr<GpuGroup> group =
            scalelab::make_gpu_group({.gpus = gpus, .timeout_seconds = timeout_s});
        std::vector<double> waited(gpus.size());
        std::latch ready_to_copy(static_cast<std::ptrdiff_t>(gpus.size()));
        run_ranks(gpus, *group, [&](int rank, scalelab::Backend& backend) {
            // Every rank's copies start together, so that none waits long for another inside
            // the all-reduce (a host latch: a collective here would be timed by the watchdog).
            // A rank that fails before it still counts down, so that the others go on.
            struct Setup {
                std::unique_ptr<Communicator> comm;
                scalelab::DeviceBuffer from, to, data;
                std::unique_ptr<scalelab::Fence> ready;
            } setup;
            try {
                setup.comm = group->communicator(rank);
                setup.from = backend.allocate(big);
                setup.to = backend.allocate(big);
                setup.data = to_device(backend, rank_values(1000, rank));
                setup.ready = backend.make_fence();
            } catch (...) {
                ready_to_copy.count_down();
                throw;
            }
            ready_to_copy.arrive_and_wait();
            const auto& [comm, from, to, data, ready] = setup;
            for (int i = 0; i < 1500; ++i)
                backend.copy(from.span(), to.span());
            ready->mark();
            const auto called = Clock::now();
            comm->all_reduce_after(*ready, data.span(), ReduceOp::Sum);
            waited[static_cast<std::size_t>(rank)] =
                std::chrono::duration<double>(Clock::now() - called).count();
        });
        // Past the timeout and a watchdog period or more: counted from the enqueue, it would
        // have ended the group (and run_ranks would have thrown comm::Aborted).
        for (std::size_t r = 0; r < gpus.size(); ++r)
            QVERIFY2(waited[r] > timeout_s + 0.25,
                     qPrintable(QString("rank %1 waited only %2 s: too little work before the "
                                        "fence to test the timeout")
                                    .arg(r)
                                    .arg(waited[r])));
    }

    void broadcast_all_gather_and_barrier() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const std::vector<int> gpus = present_gpus();
        const int ranks = static_cast<int>(gpus.size());
        const int root = ranks - 1;
        const std::size_t n = 333;
        const std::shared_ptr<GpuGroup> group = scalelab::make_gpu_group({.gpus = gpus});
        std::vector<std::vector<float>> broadcast(gpus.size()), gathered(gpus.size());
        run_ranks(gpus, *group, [&](int rank, scalelab::Backend& backend) {
            const std::unique_ptr<Communicator> comm = group->communicator(rank);
            if (comm->rank() != rank || comm->size() != ranks)
                throw std::logic_error("communicator " + std::to_string(rank) + " says rank " +
                                       std::to_string(comm->rank()) + " of " +
                                       std::to_string(comm->size()));
            comm->barrier();
            scalelab::DeviceBuffer data = to_device(backend, rank_values(n, rank));
            comm->broadcast({data.data(), n}, root);
            broadcast[static_cast<std::size_t>(rank)] = to_host(backend, data.data(), n);

            scalelab::DeviceBuffer in = to_device(backend, rank_values(n, rank));
            scalelab::DeviceBuffer out = backend.allocate(n * gpus.size());
            comm->all_gather({in.data(), n}, {out.data(), n * gpus.size()});
            gathered[static_cast<std::size_t>(rank)] =
                to_host(backend, out.data(), n * gpus.size());
            comm->barrier();
        });
        std::vector<float> all;
        for (int r = 0; r < ranks; ++r) {
            const std::vector<float> values = rank_values(n, r);
            all.insert(all.end(), values.begin(), values.end());
        }
        for (std::size_t r = 0; r < gpus.size(); ++r) {
            QVERIFY2(broadcast[r] == rank_values(n, root), "broadcast copies the root's bits");
            QVERIFY2(gathered[r] == all, "all_gather puts rank r's input at r * n");
        }
    }

    void abort_wakes_a_rank_blocked_in_a_collective() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const std::vector<int> gpus = present_gpus();
        if (gpus.size() < 2)
            QSKIP("needs 2 GPUs: a rank can wait for another only in a group of two or more");
        double waited_s = 0;
        const QString thrown = lone_all_reduce(
            gpus, 300, [](GpuGroup& group) { group.abort("stopped by the test"); }, &waited_s);
        QCOMPARE(thrown, QString("Aborted: stopped by the test"));
        QVERIFY2(waited_s >= 0.2 && waited_s < 30, qPrintable(QString::number(waited_s)));
    }

    void a_collective_past_the_timeout_aborts_the_group() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const std::vector<int> gpus = present_gpus();
        if (gpus.size() < 2)
            QSKIP("needs 2 GPUs: a rank can wait for another only in a group of two or more");
        double waited_s = 0;
        const QString thrown = lone_all_reduce(gpus, 1.0, {}, &waited_s);
        QVERIFY2(thrown.startsWith("Aborted: rank 0 (GPU") && thrown.contains("timeout of 1 s") &&
                     thrown.contains("all_reduce"),
                 qPrintable(thrown));
        QVERIFY2(waited_s >= 1.0 && waited_s < 30, qPrintable(QString::number(waited_s)));
    }

    void benchmark_rows_on_every_gpu() {
        SCALELAB_SKIP_WITHOUT_GPU();
        const std::vector<int> gpus = present_gpus();
        const auto rows = scalelab::run_gpu_allreduce_benchmark(gpus, {4096, 1 << 20, 1001}, 3);
        QCOMPARE(rows.size(), std::size_t(3));
        const std::size_t bytes[] = {4096, 1 << 20, 1000};  // whole floats
        const double n = double(gpus.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(rows[i].devices, static_cast<int>(gpus.size()));
            QCOMPARE(rows[i].bytes, bytes[i]);
            // One GPU: NCCL's in-place sum over one rank returns without work, so the two
            // events may fall within their resolution of each other, and the row says 0.
            if (gpus.size() == 1 && rows[i].time_ms == 0) {
                QCOMPARE(rows[i].algbw_GBs, 0.0);
                QCOMPARE(rows[i].busbw_GBs, 0.0);
                continue;
            }
            QVERIFY(rows[i].time_ms > 0);
            const double algbw = double(rows[i].bytes) / (rows[i].time_ms * 1e-3) / 1e9;
            QVERIFY(qAbs(rows[i].algbw_GBs - algbw) <= 1e-9 * algbw);
            QVERIFY(qAbs(rows[i].busbw_GBs - algbw * 2 * (n - 1) / n) <= 1e-9 * algbw);
        }
    }
};

QTEST_APPLESS_MAIN(TestNcclGroup)
#include "test_nccl_group.moc"
