// An experiment carried to a Slurm cluster (cluster_job.h): the sbatch script and the config
// beside it, the experiments that cannot go (GPUs, too few cores or nodes), and a script that
// bash reads.

#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "cluster_job.h"
#include "run_spec_json.h"

using namespace scalelab;

namespace {

RunSpec cpu_experiment() {
    RunSpec spec;
    spec.model = "cnn";
    spec.devices = 2;
    spec.batch = 64;
    return spec;
}

}  // namespace

class TestClusterJob : public QObject {
    Q_OBJECT

  private slots:
    void theScriptAsksSlurmForTheNodesAndTrainsTheConfig() {
        const QString script =
            cluster_job_script(cpu_experiment(), {.nodes = 4, .cpus_per_node = 16}, "exp.json");
        QVERIFY(script.contains("#SBATCH --nodes=4\n"));
        QVERIFY(script.contains("#SBATCH --ntasks-per-node=1\n"));
        QVERIFY(script.contains("#SBATCH --cpus-per-task=16\n"));
        QVERIFY(
            script.contains("train --config \"exp.json\" --threads 8 "));  // 16 cores, 2 devices
        QVERIFY(script.contains("srun --mpi=pmix"));
        QVERIFY(script.contains("mpirun --map-by ppr:1:node"));
        QVERIFY(script.contains("scalelab-cli runs import"));
    }

    // GPUs: each node's first spec.devices GPUs, whatever this machine's indices were.
    void aGpuJobAsksForTheGpusOfEachNode() {
        RunSpec gpu = cpu_experiment();
        gpu.device = DeviceKind::Gpu;
        gpu.gpus = {2, 3};
        QVERIFY(cluster_job_problem(gpu, {}).isEmpty());
        const QString script = cluster_job_script(gpu, {.nodes = 2, .cpus_per_node = 8}, "e.json");
        QVERIFY(script.contains("#SBATCH --gpus-per-node=2\n"));
        QVERIFY(script.contains("train --config \"e.json\" --store "));  // no --threads
        QTemporaryDir folder;
        QString error;
        QVERIFY2(write_cluster_job(gpu, {}, folder.filePath("g.sbatch"), &error),
                 qPrintable(error));
        QFile config(folder.filePath("g.json"));
        QVERIFY(config.open(QIODevice::ReadOnly));
        const QJsonObject json = QJsonDocument::fromJson(config.readAll()).object();
        QCOMPARE(json.value("device").toString(), QString("gpu"));
        QVERIFY(json.value("gpus").toArray().isEmpty());
    }

    void whatCannotGoIsSaid() {
        QVERIFY(cluster_job_problem(cpu_experiment(), {.nodes = 0, .cpus_per_node = 8})
                    .contains("at least 1 node"));
        QVERIFY(cluster_job_problem(cpu_experiment(), {.nodes = 2, .cpus_per_node = 1})
                    .contains("ask for at least 2"));
        QVERIFY(cluster_job_problem(cpu_experiment(), {}).isEmpty());
    }

    void bothFilesAreWrittenAndRead() {
        QTemporaryDir folder;
        const QString sbatch = folder.filePath("job one.sbatch");
        QString error;
        QVERIFY2(write_cluster_job(cpu_experiment(), {}, sbatch, &error), qPrintable(error));
        QFile config(folder.filePath("job one.json"));
        QVERIFY(config.open(QIODevice::ReadOnly));
        QCOMPARE(run_spec_to_json(run_spec_from_json(config.readAll())),
                 run_spec_to_json(cpu_experiment()));
        QProcess bash;
        bash.start("bash", {"-n", sbatch});
        QVERIFY(bash.waitForFinished(10000));
        QCOMPARE(bash.exitCode(), 0);

        const QString refused = folder.filePath("none.sbatch");
        QVERIFY(!write_cluster_job(cpu_experiment(), {.nodes = 0, .cpus_per_node = 8}, refused,
                                   &error));
        QVERIFY(error.contains("at least 1 node"));
        QVERIFY(!QFile::exists(refused));
    }
};

QTEST_MAIN(TestClusterJob)
#include "test_cluster_job.moc"
