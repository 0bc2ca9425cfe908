// A metrics file read back into the run store (runs import): what each row becomes, and what a
// file that is not one says.

#include <QtTest>

#include <QFile>
#include <QTemporaryDir>

#include "metrics_file_import.h"
#include "run_exchange.h"
#include "run_store.h"

using namespace scalelab;

namespace {

// A PyTorch script's file: two steps, one epoch, the target reached.
const char* const pytorch_rows =
    R"({"type":"start","devices":2,"threads_per_device":1,"cores":2,"global_batch":64,)"
    R"("steps_per_epoch":2,"parameters":421642,"warnings":[],"engine":"pytorch",)"
    R"("experiment":{"model":"cnn","devices":2,"batch":32}})"
    "\n"
    R"({"type":"step","step":1,"epoch":1,"loss":2.3,"accuracy":0.1,"lr":0.05,)"
    R"("images_per_s":1000,"seconds":0.25,"noise_scale":null,"devices":[]})"
    "\n"
    R"({"type":"step","step":2,"epoch":1,"loss":2.1,"accuracy":0.2,"lr":0.05,)"
    R"("images_per_s":3000,"seconds":0.5,"noise_scale":null,"devices":[]})"
    "\n"
    R"({"type":"epoch","step":2,"epoch":1,"val_loss":1.9,"val_accuracy":0.4,"loss":2.2})"
    "\n"
    R"({"type":"end","status":"reached_target","message":"","step":2,"epoch":1,"targets":[]})"
    "\n";

QString written(const QTemporaryDir& dir, const QByteArray& text) {
    const QString path = dir.filePath("run.jsonl");
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(text) != text.size())
        qFatal("cannot write %s", qPrintable(path));
    return path;
}

}  // namespace

class TestMetricsFileImport : public QObject {
    Q_OBJECT

  private slots:
    void theRowsBecomeTheRunsCurves() {
        QTemporaryDir dir;
        const QString path = written(dir, pytorch_rows);
        QVERIFY(is_metrics_file(path));
        const auto store = RunStore::open(dir.filePath("runs.sqlite"));
        const std::vector<std::int64_t> ids =
            import_runs(*store, exchange_from_metrics_file(path, "cnn in pytorch"));
        QCOMPARE(ids.size(), std::size_t(1));
        const StoredRun run = store->run(ids.front());
        QCOMPARE(run.name, QString("cnn in pytorch"));
        QCOMPARE(run.tags, QStringList{"pytorch"});
        QCOMPARE(run.state, RunState::ReachedTarget);
        QCOMPARE(run.spec.model, std::string("cnn"));
        QCOMPARE(run.info.devices, 2);
        std::vector<MetricRow> losses, accuracies;
        store->for_each_row(run.id, Metric::TrainLoss,
                            [&](const MetricRow& row) { losses.push_back(row); });
        store->for_each_row(run.id, Metric::ValAccuracy,
                            [&](const MetricRow& row) { accuracies.push_back(row); });
        QCOMPARE(losses.size(), std::size_t(2));
        QCOMPARE(losses[1].value, 2.1);
        QCOMPARE(losses[1].wall_time, 0.75);  // the step times so far
        QCOMPARE(accuracies.size(), std::size_t(1));
        QCOMPARE(accuracies[0].value, 0.4);
    }

    // Each names the line and what to change.
    void whatIsNotAMetricsFileIsSaid_data() {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("said");
        const QByteArray rows(pytorch_rows);
        QByteArray no_experiment = rows;
        no_experiment.replace(R"("experiment":{"model":"cnn","devices":2,"batch":32})",
                              R"("experiment":null)");
        QTest::newRow("no experiment") << no_experiment << "line 1: the start row has no";
        QByteArray broken = rows;
        broken.replace(R"("type":"epoch")", R"("type":"epoch)");
        QTest::newRow("broken line") << broken << "line 4: not a JSON object";
        QByteArray no_loss = rows;
        no_loss.replace(R"("loss":2.1,)", "");
        QTest::newRow("no loss") << no_loss << "line 3: \"loss\" must be a number";
        QByteArray other_devices = rows;
        other_devices.replace(R"("experiment":{"model":"cnn","devices":2)",
                              R"("experiment":{"model":"cnn","devices":4)");
        QTest::newRow("devices differ") << other_devices << "2 devices, but its config asks for 4";
    }
    void whatIsNotAMetricsFileIsSaid() {
        QFETCH(QByteArray, text);
        QFETCH(QString, said);
        QTemporaryDir dir;
        const QString path = written(dir, text);
        const auto store = RunStore::open(dir.filePath("runs.sqlite"));
        try {
            import_runs(*store, exchange_from_metrics_file(path, "run"));
            QFAIL("no error");
        } catch (const ExchangeError& error) {
            QVERIFY2(QString(error.what()).contains(said), error.what());
        }
        QVERIFY(store->list_runs().empty());
    }

    void anExchangeFileIsNotAMetricsFile() {
        QTemporaryDir dir;
        QVERIFY(!is_metrics_file(written(dir, R"({"format":"scalelab-runs","version":1})")));
    }
};

QTEST_MAIN(TestMetricsFileImport)
#include "test_metrics_file_import.moc"
