// The PyTorch export's files and refusals (tests/app/pytorch/check_export.py runs the script).

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "pytorch_export.h"
#include "run_spec_json.h"

using namespace scalelab;

namespace {

RunSpec cnn_experiment() {
    RunSpec spec;
    spec.model = "cnn";
    spec.devices = 2;
    spec.batch = 32;
    return spec;
}

QString text_of(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

}  // namespace

class TestPytorchExport : public QObject {
    Q_OBJECT

  private slots:
    // Each field the export cannot carry yet is named, with what to change.
    void whatPytorchCannotCarryIsNamed_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<QString>("named");
        QTest::newRow("model") << "model"
                               << "model: the PyTorch export has mlp and cnn so far";
        QTest::newRow("dataset") << "dataset"
                                 << "dataset: the script reads the IDX files";
        QTest::newRow("augment") << "augment"
                                 << "augment: the script has no augmentation";
        QTest::newRow("optimizer") << "optimizer"
                                   << "optimizer: the script has sgd and adamw";
        QTest::newRow("accumulation") << "accumulation"
                                      << "accumulation: the script takes one";
        QTest::newRow("target") << "target_accuracy"
                                << "target_accuracy: the script trains";
    }
    void whatPytorchCannotCarryIsNamed() {
        QFETCH(QString, field);
        QFETCH(QString, named);
        RunSpec spec = cnn_experiment();
        if (field == "model")
            spec.model = "resnet8";
        else if (field == "dataset")
            spec.dataset = "synthetic";
        else if (field == "augment")
            spec.augment = Augmentation::Flip;
        else if (field == "optimizer")
            spec.optimizer = OptimizerKind::Lars;
        else if (field == "accumulation")
            spec.accumulation = 2;
        else
            spec.target_accuracy = 0.9;
        const QStringList problems = pytorch_export_problems(spec);
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems.front().startsWith(named), qPrintable(problems.front()));
        QTemporaryDir folder;
        QString error;
        QVERIFY(!write_pytorch_export(spec, folder.filePath("out"), &error));
        QVERIFY(!QDir(folder.filePath("out")).exists());  // nothing written
        QCOMPARE(pytorch_export_problems(cnn_experiment()), QStringList());
    }

    // Five files; the script one file with every part inlined and nothing imported from
    // resources/pytorch; the experiment as its JSON config; the programs executable.
    void theFolderHoldsTheScriptAndItsFiles() {
        QTemporaryDir folder;
        const QString out = folder.filePath("cnn pytorch");
        QString error;
        QVERIFY2(write_pytorch_export(cnn_experiment(), out, &error), qPrintable(error));
        const QDir dir(out);
        QCOMPARE(dir.entryList(QDir::Files, QDir::Name),
                 QStringList(
                     {"README.md", "experiment.json", "job.sbatch", "launch.sh", "train_ddp.py"}));
        const QString script = text_of(dir.filePath("train_ddp.py"));
        for (const char* part : {"def epoch_indices(", "def channel_statistics(",
                                 "class LearningRate:", "class CNN(", "def main():"})
            QVERIFY2(script.contains(QLatin1String(part)), part);
        QVERIFY(!script.contains(QLatin1String("from scalelab_")));
        QCOMPARE(script.count(QLatin1String("\nimport torch\n")), 1);
        QCOMPARE(
            run_spec_to_json(run_spec_from_json(text_of(dir.filePath("experiment.json")).toUtf8())),
            run_spec_to_json(cnn_experiment()));
        QVERIFY(text_of(dir.filePath("launch.sh")).contains("processes=${PROCESSES:-2}"));
        QVERIFY(text_of(dir.filePath("job.sbatch")).contains("--nproc_per_node=2"));
        for (const char* program : {"train_ddp.py", "launch.sh"})
            QVERIFY(QFile::permissions(dir.filePath(QLatin1String(program))) &
                    QFileDevice::ExeOwner);
    }

    void aGpuExperimentAsksSlurmForItsGpus() {
        RunSpec spec = cnn_experiment();
        spec.device = DeviceKind::Gpu;
        QTemporaryDir folder;
        QString error;
        QVERIFY2(write_pytorch_export(spec, folder.path(), &error), qPrintable(error));
        QVERIFY(text_of(QDir(folder.path()).filePath("job.sbatch"))
                    .contains("#SBATCH --gpus-per-node=2\n"));
    }

    void aFolderThatCannotBeMadeIsSaid() {
        QString error;
        QVERIFY(!write_pytorch_export(cnn_experiment(), "/etc/passwd/out", &error));
        QVERIFY2(error.contains("/etc/passwd/out"), qPrintable(error));
    }
};

QTEST_MAIN(TestPytorchExport)
#include "test_pytorch_export.moc"
