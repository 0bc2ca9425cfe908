// The PyTorch export's files and refusals (tests/app/pytorch/check_export.py runs the script).

#include <QtTest>

#include <QDir>
#include <QFile>
#include <QTemporaryDir>

#include "lesson_library.h"
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
    // What PyTorch cannot carry is named, with what to change, and nothing is written.
    void syncBatchNormBetweenCpuProcessesIsRefused() {
        RunSpec spec = cnn_experiment();
        spec.model = "resnet8";
        spec.sync_bn = true;
        const QStringList problems = pytorch_export_problems(spec);
        QCOMPARE(problems.size(), 1);
        QVERIFY2(problems.front().startsWith("sync_bn: PyTorch's SyncBatchNorm runs on GPUs only"),
                 qPrintable(problems.front()));
        QTemporaryDir folder;
        QString error;
        QVERIFY(!write_pytorch_export(spec, folder.filePath("out"), &error));
        QVERIFY(!QDir(folder.filePath("out")).exists());
        spec.device = DeviceKind::Gpu;  // NCCL has it
        QCOMPARE(pytorch_export_problems(spec), QStringList());
    }

    // What the script carries otherwise is a warning that names the field, and README.md lists
    // it; an experiment PyTorch carries as it is has none.
    void whatPytorchCarriesOtherwiseIsListed_data() {
        QTest::addColumn<QString>("field");
        QTest::newRow("overlap") << "overlap";
        QTest::newRow("first_bucket_mb") << "first_bucket_mb";
        QTest::newRow("model") << "model";
    }
    void whatPytorchCarriesOtherwiseIsListed() {
        QFETCH(QString, field);
        QCOMPARE(pytorch_export_warnings(cnn_experiment()), QStringList());
        RunSpec spec = cnn_experiment();
        if (field == "overlap")
            spec.overlap = false;
        else if (field == "first_bucket_mb")
            spec.first_bucket_mb = 4;
        else
            spec.model = "wrn";
        const QStringList warnings = pytorch_export_warnings(spec);
        QCOMPARE(warnings.size(), 1);
        QVERIFY2(warnings.front().startsWith(field + ": "), qPrintable(warnings.front()));
        QTemporaryDir folder;
        QString error;
        QVERIFY2(write_pytorch_export(spec, folder.path(), &error), qPrintable(error));
        QVERIFY(text_of(QDir(folder.path()).filePath("README.md")).contains(warnings.front()));
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
        for (const char* part : {"def epoch_indices(", "def load_dataset(", "class LearningRate:",
                                 "class ResNet(", "class Lamb(", "def main():"})
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

    // Slurm is asked for the GPUs; launch.sh shows each process the experiment's GPUs, where
    // it names them.
    void aGpuExperimentAsksForItsGpus() {
        RunSpec spec = cnn_experiment();
        spec.device = DeviceKind::Gpu;
        QTemporaryDir folder;
        QString error;
        QVERIFY2(write_pytorch_export(spec, folder.path(), &error), qPrintable(error));
        const QDir dir(folder.path());
        QVERIFY(text_of(dir.filePath("job.sbatch")).contains("#SBATCH --gpus-per-node=2\n"));
        QVERIFY(!text_of(dir.filePath("launch.sh")).contains("CUDA_VISIBLE_DEVICES"));
        spec.gpus = {1, 3};
        QVERIFY2(write_pytorch_export(spec, folder.path(), &error), qPrintable(error));
        QVERIFY(text_of(dir.filePath("launch.sh"))
                    .contains("export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-1,3}\n"));
    }

    // Every run of every shipped lesson, on a machine without GPUs and on one with two (where
    // the lessons' gpu blocks apply), exports.
    void everyShippedLessonsRunsExport() {
        DeviceInventory cpus;
        cpus.cpu_cores = 2;
        cpus.no_gpu_reason = "no GPU in this test";
        DeviceInventory gpus = cpus;
        gpus.gpus = {GpuDescription{.index = 0, .name = "test GPU", .memory_bytes = 80ull << 30},
                     GpuDescription{.index = 1, .name = "test GPU", .memory_bytes = 80ull << 30}};
        int exported = 0;
        for (const DeviceInventory& devices : {cpus, gpus}) {
            const std::vector<LessonEntry> lessons =
                list_lessons(devices, LessonSize::Full, {shipped_lessons_folder()});
            QVERIFY(lessons.size() >= 8);
            for (const LessonEntry& entry : lessons) {
                QVERIFY2(entry.lesson.has_value(), qPrintable(entry.error));
                for (const LessonRun& run : entry.lesson->runs) {
                    QTemporaryDir folder;
                    QString error;
                    QVERIFY2(write_pytorch_export(run.spec, folder.path(), &error),
                             qPrintable(entry.file + " " + run.name + ": " + error));
                    ++exported;
                }
            }
        }
        QVERIFY(exported > 16);
    }

    void aFolderThatCannotBeMadeIsSaid() {
        QString error;
        QVERIFY(!write_pytorch_export(cnn_experiment(), "/etc/passwd/out", &error));
        QVERIFY2(error.contains("/etc/passwd/out"), qPrintable(error));
    }
};

QTEST_MAIN(TestPytorchExport)
#include "test_pytorch_export.moc"
