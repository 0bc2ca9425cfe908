// run_rank_threads: every rank on a thread of its own; a thread that cannot be started releases
// the ranks already running (which would otherwise wait for it forever) and ends in an Error
// that says what to change, instead of std::terminate.

#include <QtTest>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "comm/rank_threads.h"
#include "comm/thread_comm.h"
#include "error.h"
#include "thread_watch.h"

using namespace scalelab;
using namespace scalelab::comm;

namespace {

// Starts threads until the `fail_at`-th, which fails as std::thread does at the thread limit.
ThreadStarter failing_at(int fail_at) {
    auto started = std::make_shared<int>(0);
    return [started, fail_at](std::function<void()> body) {
        if ((*started)++ == fail_at)
            throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                                    "thread");
        return std::thread(std::move(body));
    };
}

}  // namespace

class TestRankThreads : public QObject {
    Q_OBJECT

  private slots:
    // Each rank runs once, all at the same time: a barrier of all of them returns.
    void every_rank_runs_on_a_thread_of_its_own() {
        constexpr int ranks = 4;
        const auto comms = make_thread_comms(ranks);
        std::vector<std::thread::id> ids(ranks);
        std::atomic<int> passed{0};
        bool released = false;
        run_rank_threads(
            ranks,
            [&](int rank) {
                ids[std::size_t(rank)] = std::this_thread::get_id();
                comms[std::size_t(rank)]->barrier();
                ++passed;
            },
            [&](int, const std::string&) { released = true; });
        QCOMPARE(passed.load(), ranks);
        QVERIFY(!released);
        for (int a = 0; a < ranks; ++a) {
            QVERIFY(ids[std::size_t(a)] != std::this_thread::get_id());
            for (int b = a + 1; b < ranks; ++b)
                QVERIFY(ids[std::size_t(a)] != ids[std::size_t(b)]);
        }
    }

    void a_thread_that_cannot_start_releases_the_started_ranks_data() {
        QTest::addColumn<int>("fail_at");
        QTest::newRow("the first") << 0;
        QTest::newRow("the third") << 2;
        QTest::newRow("the last") << 3;
    }

    void a_thread_that_cannot_start_releases_the_started_ranks() {
        QFETCH(int, fail_at);
        constexpr int ranks = 4;
        const auto comms = make_thread_comms(ranks);
        std::mutex mutex;
        std::vector<std::string> aborted_with;  // each started rank's Aborted reason
        std::optional<int> released_started;
        std::optional<Error> error;
        {
            // A rank never released would hang the test: this ends it, saying so.
            const testing::Watchdog watchdog("a rank waiting for one that never started",
                                             std::chrono::seconds(20));
            try {
                run_rank_threads(
                    ranks,
                    [&](int rank) {
                        try {
                            comms[std::size_t(rank)]->barrier();  // waits for every rank
                        } catch (const Aborted& e) {
                            std::lock_guard lock(mutex);
                            aborted_with.emplace_back(e.what());
                        }
                    },
                    [&](int started, const std::string& reason) {
                        released_started = started;
                        comms.front()->abort(reason);
                    },
                    failing_at(fail_at));
            } catch (const Error& e) {
                error = e;
            }
        }
        QVERIFY(released_started);
        QCOMPARE(*released_started, fail_at);
        QCOMPARE(int(aborted_with.size()), fail_at);
        for (const std::string& reason : aborted_with)
            QVERIFY2(reason.starts_with("could not start the thread of device"), reason.c_str());
        QVERIFY(error);
        QCOMPARE(error->kind(), ErrorKind::SystemLimit);
        const QString message = error->what();
        QVERIFY2(message.startsWith(
                     QString("could not start the thread of device %1 of 4 (").arg(fail_at)),
                 qPrintable(message));
        QVERIFY2(message.contains("Resource temporarily unavailable"), qPrintable(message));
        QVERIFY2(message.endsWith("ask for fewer devices, or stop other programs"),
                 qPrintable(message));
    }
};

QTEST_APPLESS_MAIN(TestRankThreads)
#include "test_rank_threads.moc"
