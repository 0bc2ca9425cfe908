// `scalelab-cli devices`, run as a user would: it prints what the engine finds on this machine
// (the GPUs, or why there is none, and the CPU cores) and exits 0; a bad flag exits 2.

#include <QtTest>

#include "backend/device_inventory.h"
#include "cli_process.h"
#include "train/run_spec.h"

using namespace scalelab;

using scalelab::testing::CliResult;
using scalelab::testing::run_cli;

class TestDevicesCommand : public QObject {
    Q_OBJECT

  private slots:
    void lists_what_the_engine_finds() {
        const CliResult r = run_cli({"devices"});
        QVERIFY2(!r.crashed && r.exit_code == 0, qPrintable(r.err));
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err));
        const DeviceInventory inventory = discover_devices();
        const QString cores =
            inventory.cpu_cores == 1 ? "1 core" : QString("%1 cores").arg(inventory.cpu_cores);
        QVERIFY2(r.out.contains(QString("CPU devices: 1 to %1 per run, sharing %2\n")
                                    .arg(max_cpu_devices)
                                    .arg(cores)),
                 qPrintable(r.out));
        if (inventory.gpus.empty()) {
            QVERIFY2(
                r.out.contains("No GPU: " + QString::fromStdString(inventory.no_gpu_reason) + "\n"),
                qPrintable(r.out));
            QVERIFY(!r.out.contains("GPU 0:"));
        }
        for (const GpuDescription& gpu : inventory.gpus)
            QVERIFY2(
                r.out.contains(
                    QString("GPU %1: %2, ").arg(gpu.index).arg(QString::fromStdString(gpu.name))),
                qPrintable(r.out));
    }

    void help_explains_the_command() {
        const CliResult r = run_cli({"devices", "--help"});
        QVERIFY2(!r.crashed && r.exit_code == 0, qPrintable(r.err));
        QVERIFY(r.out.startsWith("Usage: scalelab-cli devices"));
        QVERIFY(r.out.contains("compute capability"));
        QVERIFY(r.out.contains("--help"));
        QVERIFY(run_cli({"--help"}).out.contains("scalelab-cli devices"));
    }

    void bad_input_exits_2_with_a_message_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown flag")
            << QStringList{"devices", "--json"} << "error: unknown flag '--json'";
        QTest::newRow("stray word") << QStringList{"devices", "gpu"}
                                    << "error: unexpected argument 'gpu': flags start with --";
        QTest::newRow("help with a value") << QStringList{"devices", "--help=yes"}
                                           << "error: --help is a switch and takes no value";
    }
    void bad_input_exits_2_with_a_message() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliResult r = run_cli(args);
        QVERIFY2(!r.crashed && r.exit_code == 2, qPrintable(r.err));
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QVERIFY2(r.err.contains("Run 'scalelab-cli devices --help' for the flags."),
                 qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }
};

QTEST_APPLESS_MAIN(TestDevicesCommand)
#include "test_devices_command.moc"
