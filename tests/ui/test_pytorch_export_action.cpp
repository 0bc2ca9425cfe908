// File > Export as PyTorch script...: the window writes the form's experiment as the script's
// folder, and says why when it cannot (app/pytorch_export.h has the files themselves).

#include <QAction>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "experiment_form.h"
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
        window.form().setSpec(spec);
        QVERIFY(!window.writePytorchExport(folder.filePath("resnet-pytorch"), &error));
        QVERIFY2(error.startsWith("model: the PyTorch export has mlp and cnn"), qPrintable(error));
        QVERIFY(!QDir(folder.filePath("resnet-pytorch")).exists());
        // A form with a problem writes nothing either.
        spec.model = "cnn";
        spec.epochs = 0;
        window.form().setSpec(spec);
        QVERIFY(!window.writePytorchExport(folder.filePath("bad"), &error));
        QVERIFY2(error.contains("Fix the marked fields"), qPrintable(error));
    }
};

QTEST_MAIN(TestPytorchExportAction)
#include "test_pytorch_export_action.moc"
