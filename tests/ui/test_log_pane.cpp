#include <QComboBox>
#include <QtTest>

#include <spdlog/spdlog.h>

#include "log_pane.h"
#include "log_relay.h"

using scalelab::LogPane;

class TestLogPane : public QObject {
    Q_OBJECT

  private slots:
    void shows_the_relayed_lines_at_the_chosen_level() {
        spdlog::set_level(spdlog::level::debug);
        scalelab::LogRelay relay;
        LogPane pane;
        connect(&relay, &scalelab::LogRelay::lineLogged, &pane, &LogPane::appendLine);

        spdlog::debug("details");
        spdlog::info("epoch 1 done");
        spdlog::warn("8 devices on 2 cores");
        spdlog::error("diverged");
        QTRY_COMPARE(pane.text().count(QLatin1Char('\n')), 3);
        const QStringList lines = pane.text().split(QLatin1Char('\n'));
        QVERIFY(lines[0].endsWith(QStringLiteral("details")));
        QVERIFY(lines[3].endsWith(QStringLiteral("diverged")));

        pane.setMinimumLevel(int(spdlog::level::warn));
        QCOMPARE(pane.text().split(QLatin1Char('\n')).size(), 2);
        QVERIFY(!pane.text().contains(QStringLiteral("epoch 1 done")));
        pane.appendLine(int(spdlog::level::info), QStringLiteral("hidden by the filter"));
        QVERIFY(!pane.text().contains(QStringLiteral("hidden by the filter")));
        pane.setMinimumLevel(int(spdlog::level::trace));
        QVERIFY(pane.text().contains(QStringLiteral("hidden by the filter")));
    }

    void keeps_the_last_lines_only() {
        LogPane pane;
        for (int i = 0; i < LogPane::max_lines + 10; ++i)
            pane.appendLine(int(spdlog::level::info), QStringLiteral("line %1").arg(i));
        const QStringList lines = pane.text().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), LogPane::max_lines);
        QCOMPARE(lines.front(), QStringLiteral("line 10"));
        QCOMPARE(lines.back(), QStringLiteral("line %1").arg(LogPane::max_lines + 9));
    }
};

QTEST_MAIN(TestLogPane)
#include "test_log_pane.moc"
