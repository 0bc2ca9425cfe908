// File > Export cluster job...: the dialog says why an experiment cannot go and keeps Save
// disabled until it can; the window writes the script and the experiment beside it.

#include <QDialogButtonBox>
#include <QFile>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include "cluster_job_dialog.h"
#include "experiment_form.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::WindowUnderTest;

class TestClusterJobDialog : public QObject {
    Q_OBJECT

  private slots:
    void saveIsDisabledWithTheReasonUntilTheJobCanGo() {
        RunSpec spec;
        spec.devices = 4;
        ClusterJobDialog dialog(spec);
        QPushButton* save = dialog.findChild<QDialogButtonBox*>()->button(QDialogButtonBox::Ok);
        QVERIFY(dialog.problem().isEmpty());
        QVERIFY(save->isEnabled());
        dialog.coresBox().setValue(2);  // fewer cores than devices
        QVERIFY(dialog.problem().contains("ask for at least 4"));
        QVERIFY(!save->isEnabled());
        dialog.coresBox().setValue(8);
        dialog.nodesBox().setValue(0);
        QVERIFY(dialog.problem().contains("at least 1 node"));
        dialog.nodesBox().setValue(3);
        QVERIFY(save->isEnabled());
        QCOMPARE(dialog.job().nodes, 3);
        QCOMPARE(dialog.job().cpus_per_node, 8);

        spec.device = DeviceKind::Gpu;
        ClusterJobDialog gpus(spec);
        QVERIFY(gpus.problem().isEmpty());
        QVERIFY(gpus.findChild<QLabel*>(QStringLiteral("summary"))->text().contains("x 4 GPUs"));
    }

    void theWindowWritesTheFormsExperiment() {
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        QVERIFY(window.findChild<QAction*>(QStringLiteral("clusterJobAction")));
        QTemporaryDir folder;
        QString error;
        QVERIFY2(window.writeClusterJob({.nodes = 2, .cpus_per_node = 4},
                                        folder.filePath("job.sbatch"), &error),
                 qPrintable(error));
        QVERIFY(QFile::exists(folder.filePath("job.json")));
        // A form with a problem writes nothing.
        RunSpec bad = window.form().spec();
        bad.epochs = 0;
        window.form().setSpec(bad);
        QVERIFY(!window.writeClusterJob({}, folder.filePath("bad.sbatch"), &error));
        QVERIFY2(error.contains("Fix the marked fields"), qPrintable(error));
        QVERIFY(!QFile::exists(folder.filePath("bad.sbatch")));
    }
};

QTEST_MAIN(TestClusterJobDialog)
#include "test_cluster_job_dialog.moc"
