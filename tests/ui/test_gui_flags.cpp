// The desktop app's own flags, run as a user runs it: a bad one exits with 2 and a message
// saying what to give instead, before any window opens (docs/errors.md, E-FLAG-THEME and
// E-FLAG-NO-STORE).

#include <QProcess>
#include <QtTest>

namespace {

struct Ended {
    int exit_code = -1;  // -1: did not end normally within 30 s
    QString out;
    QString err;
};

// scalelab with `args` in `environment`, to its end.
Ended run_gui(const QStringList& args,
              const QProcessEnvironment& environment = QProcessEnvironment::systemEnvironment()) {
    QProcess app;
    app.setProcessEnvironment(environment);
    app.start(QStringLiteral(SCALELAB_GUI_PATH), args);
    if (!app.waitForFinished(30'000) || app.exitStatus() != QProcess::NormalExit)
        return {};
    return {app.exitCode(), QString::fromUtf8(app.readAllStandardOutput()),
            QString::fromUtf8(app.readAllStandardError())};
}

}  // namespace

class TestGuiFlags : public QObject {
    Q_OBJECT

  private slots:
    void bad_flags_exit_2_with_a_message_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("theme") << QStringList{"--theme", "blue"}
                               << "scalelab: --theme must be light or dark, not 'blue'\n";
        // Qt's own options (-platform, X11's -geometry) are Qt's, not unknown flags.
        QTest::newRow("theme after -platform")
            << QStringList{"-platform", "offscreen", "--theme", "blue"}
            << "scalelab: --theme must be light or dark, not 'blue'\n";
        QTest::newRow("store and no store")
            << QStringList{"--store", "runs.sqlite", "--no-store"}
            << "scalelab: give --store FILE or --no-store, not both\n";
    }
    void bad_flags_exit_2_with_a_message() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const Ended app = run_gui(args);
        QCOMPARE(app.exit_code, 2);
        // Qt may warn first (no XDG_RUNTIME_DIR): the message is the last line.
        const QString& err = app.err;
        QVERIFY2(err.endsWith(message) && !err.chopped(message.size()).contains("scalelab:"),
                 qPrintable(err));
    }

    // --help needs no display; without one the window says so instead of aborting.
    void help_and_a_missing_display_need_no_display() {
        QProcessEnvironment environment = QProcessEnvironment::systemEnvironment();
        for (const char* name : {"DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"})
            environment.remove(QLatin1String(name));
        const Ended help = run_gui({QStringLiteral("--help")}, environment);
        QCOMPARE(help.exit_code, 0);
        QVERIFY2(help.out.startsWith("Usage: scalelab ") && help.out.contains("--theme"),
                 qPrintable(help.out));

        const Ended window = run_gui({QStringLiteral("--no-store")}, environment);
        QCOMPARE(window.exit_code, 2);
        QVERIFY(window.err.contains("scalelab: no display to open the window on"));
    }
};

QTEST_GUILESS_MAIN(TestGuiFlags)
#include "test_gui_flags.moc"
