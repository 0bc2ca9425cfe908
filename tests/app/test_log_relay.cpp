#include <QSignalSpy>
#include <QThread>
#include <QtTest>

#include <spdlog/spdlog.h>

#include <memory>
#include <thread>

#include "log_relay.h"

using scalelab::LogRelay;

class TestLogRelay : public QObject {
    Q_OBJECT

  private slots:
    void initTestCase() { spdlog::set_level(spdlog::level::info); }

    void a_line_from_another_thread_arrives_through_the_event_loop() {
        LogRelay relay;
        QSignalSpy lines(&relay, &LogRelay::lineLogged);
        bool delivered_on_this_thread = false;
        connect(&relay, &LogRelay::lineLogged, this,
                [&] { delivered_on_this_thread = QThread::currentThread() == thread(); });

        std::thread worker([] { spdlog::warn("device {} is slow", 3); });
        worker.join();
        // Queued, not called on the worker: nothing until this thread's event loop runs.
        QCOMPARE(lines.count(), 0);
        QTRY_COMPARE(lines.count(), 1);
        QVERIFY(delivered_on_this_thread);
        QCOMPARE(lines.front().at(0).toInt(), int(spdlog::level::warn));
        const QString line = lines.front().at(1).toString();
        QVERIFY2(line.endsWith(QStringLiteral("device 3 is slow")), qPrintable(line));
        QVERIFY2(line.contains(QStringLiteral("[warning]")), qPrintable(line));

        spdlog::debug("below the logger's level");
        spdlog::error("failed");
        QTRY_COMPARE(lines.count(), 2);
        QCOMPARE(lines.back().at(0).toInt(), int(spdlog::level::err));
    }

    void nothing_reaches_a_relay_after_it_is_gone() {
        const std::size_t sinks_before = [] {
            LogRelay first;
            return spdlog::default_logger()->sinks().size();
        }();
        // A line in flight when the relay dies is dropped with it.
        auto doomed = std::make_unique<LogRelay>();
        std::thread([] { spdlog::info("in flight"); }).join();
        doomed.reset();
        QCoreApplication::processEvents();
        spdlog::info("after the relay");

        LogRelay second;
        QSignalSpy lines(&second, &LogRelay::lineLogged);
        spdlog::info("for the second relay");
        QTRY_COMPARE(lines.count(), 1);
        QTest::qWait(50);
        QCOMPARE(lines.count(), 1);
        QVERIFY(lines.front().at(1).toString().endsWith(QStringLiteral("for the second relay")));
        // Relays come and go without leaving sinks behind in the logger.
        QCOMPARE(spdlog::default_logger()->sinks().size(), sinks_before);
    }
};

QTEST_MAIN(TestLogRelay)
#include "test_log_relay.moc"
