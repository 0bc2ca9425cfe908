// File > Export as PyTorch script... and a run's context menu: the window writes the form's or
// the run's experiment as the script's folder, and says why when it cannot
// (app/pytorch_export.h has the files themselves).

#include <QAction>
#include <QDialog>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "experiment_form.h"
#include "run_table_view.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::WindowUnderTest;

class TestPytorchExportAction : public QObject {
    Q_OBJECT

  private slots:
    void theWindowWritesTheFormsExperiment() {
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        QVERIFY(window.findChild<QAction*>(QStringLiteral("pytorchExportAction")));
        RunSpec spec = window.form().spec();
        spec.model = "mlp";
        window.form().setSpec(spec);
        QTemporaryDir folder;
        QString error;
        QVERIFY2(window.writePytorchExport(folder.filePath("mlp-pytorch"), &error),
                 qPrintable(error));
        QVERIFY(QFile::exists(folder.filePath("mlp-pytorch/train_ddp.py")));
        QVERIFY(QFile::exists(folder.filePath("mlp-pytorch/experiment.json")));

        // What the script cannot carry is named, and nothing is written.
        spec.model = "resnet20";
        spec.sync_bn = true;
        window.form().setSpec(spec);
        QVERIFY(!window.writePytorchExport(folder.filePath("resnet-pytorch"), &error));
        QVERIFY2(error.startsWith("sync_bn: PyTorch's SyncBatchNorm runs on GPUs only"),
                 qPrintable(error));
        QVERIFY(!QDir(folder.filePath("resnet-pytorch")).exists());
        // A form with a problem writes nothing either.
        spec.model = "cnn";
        spec.sync_bn = false;
        spec.epochs = 0;
        window.form().setSpec(spec);
        QVERIFY(!window.writePytorchExport(folder.filePath("bad"), &error));
        QVERIFY2(error.contains("Fix the marked fields"), qPrintable(error));
    }

    void aRunsContextMenuWritesTheRunsExperiment() {
        WindowUnderTest under_test;
        RunSpec spec = under_test.window.form().spec();
        spec.model = "mlp";
        spec.batch = 48;
        RunRecord run;
        run.name = QStringLiteral("stored mlp");
        run.spec = spec;
        run.state = RunState::Finished;
        const int id = under_test.runs.add(std::move(run));
        auto* table = under_test.window.findChild<RunTableView*>();
        QVERIFY(table);
        table->selectRun(id);
        auto* action = table->findChild<QAction*>(QStringLiteral("runPytorchExportAction"));
        QVERIFY(action && action->isEnabled());
        QSignalSpy requests(table, &RunTableView::pytorchExportRequested);
        // The window asks for a folder; cancelled, it writes nothing.
        scalelab::testing::on_next_dialog<QDialog>([](QDialog& dialog) { dialog.reject(); });
        action->trigger();
        QCOMPARE(requests.count(), 1);
        QCOMPARE(requests.front().at(0).toInt(), id);

        // The run's experiment, not the form's, goes into the folder.
        QTemporaryDir folder;
        QString error;
        QVERIFY2(under_test.window.writeRunPytorchExport(id, folder.filePath("run"), &error),
                 qPrintable(error));
        QFile experiment(folder.filePath("run/experiment.json"));
        QVERIFY(experiment.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(experiment.readAll()).object().value("batch").toInt(), 48);
        QVERIFY(!under_test.window.writeRunPytorchExport(id + 1, folder.filePath("gone"), &error));
        QVERIFY2(error.contains("no longer"), qPrintable(error));
    }
};

QTEST_MAIN(TestPytorchExportAction)
#include "test_pytorch_export_action.moc"
