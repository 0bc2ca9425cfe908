#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

namespace {

struct CliResult {
    int exit_code = -1;
    bool crashed = false;
    QString out;
    QString err;
};

CliResult run_cli(const QStringList& args, int timeout_ms = 120'000) {
    QProcess process;
    process.start(SCALELAB_CLI_PATH, args);
    CliResult result;
    if (!process.waitForFinished(timeout_ms)) {
        process.kill();
        process.waitForFinished();
        result.err = "timed out";
        return result;
    }
    result.crashed = process.exitStatus() == QProcess::CrashExit;
    result.exit_code = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

// The rows of a --metrics-out file; an unparseable line becomes an empty object.
QList<QJsonObject> read_rows(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QJsonObject> rows;
    for (const QByteArray& line : file.readAll().split('\n'))
        if (!line.isEmpty())
            rows.append(QJsonDocument::fromJson(line).object());
    return rows;
}

QList<QJsonObject> rows_of_type(const QList<QJsonObject>& rows, const QString& type) {
    QList<QJsonObject> matching;
    for (const QJsonObject& row : rows)
        if (row["type"].toString() == type)
            matching.append(row);
    return matching;
}

const QStringList small_synthetic_run{"train", "--dataset",        "synthetic", "--synthetic-train",
                                      "512",   "--synthetic-test", "128",       "--epochs",
                                      "1",     "--batch",          "64",        "--model",
                                      "mlp"};

void write_file(const QString& path, const QByteArray& content) {
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
}

}  // namespace

#define QVERIFY_EXIT(result, code)                              \
    QVERIFY2(!(result).crashed && (result).exit_code == (code), \
             qPrintable(QString("exit %1, stderr: %2").arg((result).exit_code).arg((result).err)))

class TestCli : public QObject {
    Q_OBJECT

  private slots:
    void help_and_version_exit_zero() {
        CliResult r = run_cli({"--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("train") && r.out.contains("bench"));
        r = run_cli({"train", "--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("--metrics-out"));
        QVERIFY(r.out.contains("--devices") && r.out.contains("--global-batch"));
        r = run_cli({"bench", "--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("bench train") && r.out.contains("bench sgemm"));
        r = run_cli({"bench", "train", "--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("--threads") && r.out.contains("--devices"));
        r = run_cli({"bench", "sgemm", "--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("--size"));
        r = run_cli({"bench", "allreduce", "--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("--devices") && r.out.contains("busbw"));
        r = run_cli({"--version"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.startsWith("scalelab-cli "));
    }

    void bad_input_exits_2_with_a_message_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown flag") << QStringList{"train", "--bogus"} << "unknown flag --bogus";
        QTest::newRow("batch 0") << QStringList{"train", "--batch", "0"} << "batch";
        QTest::newRow("epochs -1") << QStringList{"train", "--epochs", "-1"} << "epochs";
        QTest::newRow("lr 0") << QStringList{"train", "--lr", "0"} << "lr";
        QTest::newRow("not a number") << QStringList{"train", "--epochs", "two"} << "--epochs";
        QTest::newRow("unknown model") << QStringList{"train", "--model", "vgg"} << "vgg";
        QTest::newRow("unknown dataset")
            << QStringList{"train", "--dataset", "imagenet"} << "imagenet";
        QTest::newRow("missing fashion-mnist")
            << QStringList{"train", "--dataset", "fashion-mnist", "--data", "/nonexistent"}
            << "dataset-fashion-mnist";
        QTest::newRow("unwritable metrics")
            << QStringList{"train", "--dataset", "synthetic", "--metrics-out",
                           "/nonexistent/dir/m.jsonl"}
            << "/nonexistent/dir/m.jsonl";
        QTest::newRow("global batch not divisible by devices")
            << QStringList{"train", "--global-batch", "100", "--devices", "3"}
            << "--global-batch 100 is not divisible by 3 devices: use --global-batch 99";
        QTest::newRow("devices 0")
            << QStringList{"train", "--devices", "0"} << "devices must be between 1 and 16";
        QTest::newRow("devices 17")
            << QStringList{"train", "--devices", "17"} << "devices must be between 1 and 16";
        QTest::newRow("batch and global batch")
            << QStringList{"train", "--batch", "64", "--global-batch", "128"} << "not both";
        QTest::newRow("unknown optimizer")
            << QStringList{"train", "--optimizer", "adam"}
            << "--optimizer expects one of sgd|lars|lamb|novograd|adamw, got 'adam'";
        QTest::newRow("unknown lr scaling") << QStringList{"train", "--lr-scaling", "cubic"}
                                            << "--lr-scaling expects one of none|linear|sqrt";
        QTest::newRow("unknown warm-up") << QStringList{"train", "--warmup", "2"}
                                         << "--warmup expects one of gradual|per-epoch|constant";
        QTest::newRow("unknown schedule")
            << QStringList{"train", "--schedule", "linear"}
            << "--schedule expects one of constant|step|multistep|cosine|poly|exp";
        QTest::newRow("unknown augmentation")
            << QStringList{"train", "--augment", "rotate"}
            << "--augment expects one of none|flip|crop-flip|assessment";
        QTest::newRow("augment without a value")
            << QStringList{"train", "--augment"} << "--augment";
        QTest::newRow("reference batch 0")
            << QStringList{"train", "--reference-batch", "0"} << "--reference-batch";
        QTest::newRow("targets 1.5") << QStringList{"train", "--targets", "0.85,1.5"}
                                     << "--targets expects accuracies in (0, 1]";
        QTest::newRow("warm-up longer than the run")
            << QStringList{"train", "--epochs", "2", "--warmup-epochs", "5"} << "warm-up";
        QTest::newRow("bench devices 17")
            << QStringList{"bench", "train", "--devices", "17"} << "--devices";
        QTest::newRow("unknown command") << QStringList{"fly"} << "unknown command";
        QTest::newRow("bench without target") << QStringList{"bench", "infer"} << "train";
        QTest::newRow("bench batch 0")
            << QStringList{"bench", "train", "--batch", "0"} << "--batch";
        QTest::newRow("bench unknown model")
            << QStringList{"bench", "train", "--model", "vgg", "--windows", "1"} << "vgg";
        QTest::newRow("sgemm size 0") << QStringList{"bench", "sgemm", "--size", "0"} << "--size";
        QTest::newRow("sgemm threads 0")
            << QStringList{"bench", "sgemm", "--threads", "0"} << "--threads";
        QTest::newRow("allreduce devices 0")
            << QStringList{"bench", "allreduce", "--devices", "0"} << "--devices";
        QTest::newRow("allreduce devices 17")
            << QStringList{"bench", "allreduce", "--devices", "17"} << "--devices";
        QTest::newRow("allreduce sizes abc")
            << QStringList{"bench", "allreduce", "--sizes", "abc"} << "--sizes";
        QTest::newRow("allreduce sizes 0")
            << QStringList{"bench", "allreduce", "--sizes", "1M,0"} << "--sizes";
        QTest::newRow("allreduce iters 0")
            << QStringList{"bench", "allreduce", "--iters", "0"} << "--iters";
    }
    void bad_input_exits_2_with_a_message() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliResult r = run_cli(args);
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void bench_sgemm_prints_one_json_row() {
        const CliResult r =
            run_cli({"bench", "sgemm", "--threads", "1", "--size", "128", "--json"});
        QVERIFY_EXIT(r, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        const QJsonObject row = QJsonDocument::fromJson(lines.front().toUtf8()).object();
        QCOMPARE(row["threads"].toInt(), 1);
        QCOMPARE(row["size"].toInt(), 128);
        QVERIFY2(row["gflops"].toDouble() > 0.0, qPrintable(lines.front()));
        QVERIFY(row["gflops_max"].toDouble() >= row["gflops"].toDouble());
    }

    void bench_train_json_rows_name_the_devices() {
        const CliResult r = run_cli({"bench", "train", "--model", "mlp", "--batch", "16",
                                     "--threads", "1", "--devices", "1", "--warmup-steps", "1",
                                     "--windows", "1", "--images", "16", "--json"});
        QVERIFY_EXIT(r, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        const QJsonObject row = QJsonDocument::fromJson(lines.front().toUtf8()).object();
        QCOMPARE(row["devices"].toInt(), 1);
        QCOMPARE(row["threads"].toInt(), 1);
        QCOMPARE(row["batch"].toInt(), 16);
        QVERIFY2(row["images_per_s"].toDouble() > 0.0, qPrintable(lines.front()));
    }

    void bench_allreduce_prints_one_json_row() {
        const CliResult r = run_cli(
            {"bench", "allreduce", "--devices", "2", "--sizes", "1M", "--iters", "3", "--json"});
        QVERIFY_EXIT(r, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        const QJsonObject row = QJsonDocument::fromJson(lines.front().toUtf8()).object();
        QCOMPARE(row["devices"].toInt(), 2);
        QCOMPARE(row["bytes"].toInteger(), qint64(1) << 20);
        QVERIFY2(row["time_ms"].toDouble() > 0.0, qPrintable(lines.front()));
        const double algbw = row["algbw_GBs"].toDouble();
        QVERIFY2(algbw > 0.0, qPrintable(lines.front()));
        // busbw = algbw * 2 (N - 1) / N, which is algbw itself for 2 devices.
        QVERIFY(qAbs(row["busbw_GBs"].toDouble() - algbw) <= 1e-9 * algbw);
    }

    void malformed_config_exits_2_with_the_line() {
        QTemporaryDir dir;
        const QString path = dir.filePath("run.json");
        write_file(path, "{\n  \"model\": \"mlp\",\n  \"epochs\": 1\n  \"batch\": 64\n}\n");
        const CliResult r = run_cli({"train", "--config", path});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains("line 4"), qPrintable(r.err));
    }

    void corrupt_idx_folder_exits_2() {
        QTemporaryDir dir;
        for (const char* name : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte",
                                 "t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte"})
            write_file(dir.filePath(name), "this is not an IDX file");
        const CliResult r = run_cli({"train", "--dataset", "mnist", "--data", dir.path()});
        QVERIFY_EXIT(r, 2);
        QVERIFY(r.err.contains("error:"));
    }

    void short_synthetic_run_finishes_and_writes_metrics() {
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        const CliResult r = run_cli(small_synthetic_run + QStringList{"--metrics-out", metrics});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("epoch 1/1"), qPrintable(r.out));
        QVERIFY2(r.out.contains("finished"), qPrintable(r.out));
        QVERIFY2(!r.out.contains('\r'), "no progress bar when stdout is not a terminal");

        const QList<QJsonObject> rows = read_rows(metrics);
        QCOMPARE(rows_of_type(rows, "step").size(), 8);  // 512 images / batch 64
        const QList<QJsonObject> starts = rows_of_type(rows, "start");
        QCOMPARE(starts.size(), 1);
        QCOMPARE(starts.front()["devices"].toInt(), 1);
        QCOMPARE(starts.front()["global_batch"].toInt(), 64);
        const QList<QJsonObject> steps = rows_of_type(rows, "step");
        for (const char* key : {"step", "epoch", "loss", "accuracy", "lr", "images_per_s",
                                "seconds", "noise_scale", "devices"})
            QVERIFY2(steps.front().contains(key), key);
        // One device, no accumulation: no small batch to compare with, so the noise scale may
        // stay unknown (null); the key is always there.
        QVERIFY(steps.back()["noise_scale"].isNull() || steps.back()["noise_scale"].isDouble());
        QCOMPARE(steps.front()["devices"].toArray().size(), 1);
        const QList<QJsonObject> epochs = rows_of_type(rows, "epoch");
        QCOMPARE(epochs.size(), 1);
        for (const char* key :
             {"step", "epoch", "loss", "lr", "images_per_s", "train_loss", "train_accuracy",
              "val_loss", "val_accuracy", "epoch_seconds", "steady_images_per_s", "reached"})
            QVERIFY2(epochs.front().contains(key), key);
        QVERIFY(epochs.front()["reached"].isArray());
        QCOMPARE(rows.back()["type"].toString(), QString("end"));
        QVERIFY(rows.back()["targets"].isArray());
        QCOMPARE(rows.back()["status"].toString(), QString("finished"));
    }

    // Needs the N-device trainer: two devices, each step row carrying both devices' times.
    void two_device_run_writes_the_breakdown() {
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        const CliResult r = run_cli({"train", "--dataset", "synthetic", "--synthetic-train", "512",
                                     "--synthetic-test", "128", "--epochs", "1", "--batch", "32",
                                     "--model", "mlp", "--devices", "2", "--metrics-out", metrics});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("2 devices"), qPrintable(r.out));
        QVERIFY2(r.out.contains("global batch 64"), qPrintable(r.out));
        QVERIFY2(r.out.contains("ms/step per device: forward"), qPrintable(r.out));

        const QList<QJsonObject> rows = read_rows(metrics);
        QVERIFY(!rows.isEmpty());
        const QJsonObject start = rows.front();
        QCOMPARE(start["type"].toString(), QString("start"));
        QCOMPARE(start["devices"].toInt(), 2);
        QCOMPARE(start["global_batch"].toInt(), 64);
        QCOMPARE(start["steps_per_epoch"].toInt(), 8);  // 512 images / (2 x 32)
        for (const char* key : {"threads_per_device", "cores", "parameters", "warnings"})
            QVERIFY2(start.contains(key), key);

        const QList<QJsonObject> steps = rows_of_type(rows, "step");
        QCOMPARE(steps.size(), 8);
        for (const QJsonObject& step : steps) {
            QVERIFY(step["seconds"].toDouble() > 0.0);
            const QJsonArray devices = step["devices"].toArray();
            QCOMPARE(devices.size(), 2);
            for (int rank = 0; rank < 2; ++rank) {
                const QJsonObject device = devices[rank].toObject();
                QCOMPARE(device["rank"].toInt(), rank);
                for (const char* key :
                     {"data", "forward", "backward", "exposed_comm", "wait", "optimizer"})
                    QVERIFY2(device[key].isDouble(), key);
            }
        }
        const QList<QJsonObject> epochs = rows_of_type(rows, "epoch");
        QCOMPARE(epochs.size(), 1);
        QVERIFY(epochs.front().contains("steady_images_per_s"));
        QCOMPARE(rows.back()["status"].toString(), QString("finished"));
    }

    void scaled_lr_and_optimizer_are_on_the_first_line() {
        const CliResult r = run_cli(small_synthetic_run +
                                    QStringList{"--optimizer", "lars", "--lr-scaling", "linear",
                                                "--reference-batch", "32", "--warmup", "gradual",
                                                "--warmup-epochs", "1"});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("lars, lr 0.05 x linear(64/32) = 0.1"), qPrintable(r.out));
    }

    void huge_learning_rate_diverges_with_exit_3() {
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        const CliResult r =
            run_cli(small_synthetic_run + QStringList{"--lr", "1e6", "--metrics-out", metrics});
        QVERIFY_EXIT(r, 3);
        const QList<QJsonObject> rows = read_rows(metrics);
        QVERIFY(!rows.isEmpty());
        QCOMPARE(rows.back()["type"].toString(), QString("end"));
        QCOMPARE(rows.back()["status"].toString(), QString("diverged"));
    }

    void ctrl_c_cancels_with_exit_130() {
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        QProcess process;
        process.start(SCALELAB_CLI_PATH,
                      {"train", "--dataset", "synthetic", "--model", "mlp", "--epochs", "1000",
                       "--batch", "16", "--metrics-out", metrics});
        // The header line is printed once Ctrl-C cancels the run instead of killing it.
        QVERIFY(process.waitForReadyRead(60'000));
        QVERIFY(QString(process.readLine()).startsWith("training"));
        ::kill(pid_t(process.processId()), SIGINT);
        QVERIFY(process.waitForFinished(60'000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 130);
        const QList<QJsonObject> rows = read_rows(metrics);
        QVERIFY(!rows.isEmpty());
        QCOMPARE(rows.back()["status"].toString(), QString("cancelled"));
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
