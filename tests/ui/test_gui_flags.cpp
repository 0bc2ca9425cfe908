// The desktop app's own flags, run as a user runs it: a bad one exits with 2 and a message
// saying what to give instead, before any window opens (docs/errors.md, E-FLAG-THEME and
// E-FLAG-NO-STORE).

#include <QProcess>
#include <QtTest>

class TestGuiFlags : public QObject {
    Q_OBJECT

  private slots:
    void bad_flags_exit_2_with_a_message_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("theme") << QStringList{"--theme", "blue"}
                               << "scalelab: --theme must be light or dark, not 'blue'\n";
        QTest::newRow("store and no store")
            << QStringList{"--store", "runs.sqlite", "--no-store"}
            << "scalelab: give --store FILE or --no-store, not both\n";
    }
    void bad_flags_exit_2_with_a_message() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QProcess app;
        app.start(QStringLiteral(SCALELAB_GUI_PATH), args);
        QVERIFY(app.waitForFinished(30'000));
        QCOMPARE(app.exitStatus(), QProcess::NormalExit);
        QCOMPARE(app.exitCode(), 2);
        // Qt may warn first (no XDG_RUNTIME_DIR): the message is the last line.
        const QString err = QString::fromUtf8(app.readAllStandardError());
        QVERIFY2(err.endsWith(message) && !err.chopped(message.size()).contains("scalelab:"),
                 qPrintable(err));
    }

    // --help needs no display; without one the window says so instead of aborting.
    void help_and_a_missing_display_need_no_display() {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            environment.remove(QLatin1String(name));
        QProcess help;
        help.setProcessEnvironment(environment);
        help.start(QStringLiteral(SCALELAB_GUI_PATH), {QStringLiteral("--help")});
        QVERIFY(help.waitForFinished(30'000));
        QCOMPARE(help.exitStatus(), QProcess::NormalExit);
        QCOMPARE(help.exitCode(), 0);
        const QString usage = QString::fromUtf8(help.readAllStandardOutput());
        QVERIFY2(usage.startsWith("Usage: scalelab ") && usage.contains("--theme"),
                 qPrintable(usage));

        QProcess window;
        window.setProcessEnvironment(environment);
        window.start(QStringLiteral(SCALELAB_GUI_PATH), {QStringLiteral("--no-store")});
        QVERIFY(window.waitForFinished(30'000));
        QCOMPARE(window.exitStatus(), QProcess::NormalExit);
        QCOMPARE(window.exitCode(), 2);
        QVERIFY(QString::fromUtf8(window.readAllStandardError())
                    .contains("scalelab: no display to open the window on"));
    }
};

QTEST_GUILESS_MAIN(TestGuiFlags)
#include "test_gui_flags.moc"
