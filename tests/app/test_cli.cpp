#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <memory>

#include "backend/device_inventory.h"
#include "backend/gpu_selection.h"
#include "cli_process.h"
#include "run_store.h"

using scalelab::RunState;
using scalelab::RunStore;

using scalelab::testing::CliResult;
using scalelab::testing::run_cli;

namespace {

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

// The child process may write files of at most `bytes`, as a full disk would allow: a write past
// the limit fails with EFBIG (SIGXFSZ is ignored).
void limit_file_size(QProcess& process, rlim_t bytes) {
    process.setChildProcessModifier([bytes] {
        const rlimit limit{bytes, bytes};
        ::setrlimit(RLIMIT_FSIZE, &limit);
        ::signal(SIGXFSZ, SIG_IGN);
    });
}

QByteArray file_bytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// The last step row a --metrics-out file holds, and the step from which its last
// `seconds_back` seconds of training began (the step times summed backwards).
struct LastSteps {
    qint64 last = 0;
    qint64 since = 0;
};
LastSteps last_steps(const QList<QJsonObject>& rows, double seconds_back) {
    const QList<QJsonObject> steps = rows_of_type(rows, "step");
    LastSteps out;
    if (steps.isEmpty())
        return out;
    out.last = steps.back()["step"].toInteger();
    double seconds = 0;
    for (auto it = steps.rbegin(); it != steps.rend() && seconds < seconds_back; ++it) {
        seconds += (*it)["seconds"].toDouble();
        out.since = (*it)["step"].toInteger();
    }
    return out;
}

std::int64_t last_stored_step(const RunStore& store, std::int64_t id) {
    const std::vector<scalelab::MetricRow> rows = store.metrics(id);
    return rows.empty() ? 0 : rows.back().step;
}

}  // namespace

// `result` is evaluated once: it may be the run_cli call itself.
#define QVERIFY_EXIT(result, code)                                                               \
    do {                                                                                         \
        const CliResult& checked = (result);                                                     \
        QVERIFY2(                                                                                \
            !checked.crashed && checked.exit_code == (code),                                     \
            qPrintable(QString("exit %1, stderr: %2").arg(checked.exit_code).arg(checked.err))); \
    } while (false)

class TestCli : public QObject {
    Q_OBJECT

    // Runs without --store go to the default store: one of the test's own, never the user's.
    QTemporaryDir data_home_;

  private slots:
    void initTestCase() {
        QVERIFY(data_home_.isValid());
        qputenv("XDG_DATA_HOME", QFile::encodeName(data_home_.path()));
    }

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
        QVERIFY(r.out.contains("--backend") && r.out.contains("--gpus"));
        r = run_cli({"--version"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.startsWith("scalelab-cli "));
    }

    // Every command and subcommand the top-level usage names (its "scalelab-cli WORD SUB|SUB"
    // lines, so that a command added there is walked too), and each command word alone,
    // answers --help and -h with its own usage on stdout, nothing on stderr, and exit 0.
    void help_answers_after_every_command() {
        const CliResult top = run_cli({"--help"});
        QVERIFY_EXIT(top, 0);
        QSet<QStringList> paths;
        for (const QString& line : top.out.split('\n')) {
            // The command column: what comes before the description's run of spaces.
            QStringList words =
                line.trimmed().split(QRegularExpression("\\s{2,}")).first().split(' ');
            if (words.size() < 2 || words.takeFirst() != "scalelab-cli")
                continue;
            QList<QStringList> expanded{{}};
            for (const QString& word : words) {
                if (word.startsWith('-') || word.startsWith('[') || word.toUpper() == word)
                    break;
                QList<QStringList> longer;
                for (const QStringList& prefix : expanded)
                    for (const QString& alternative : word.split('|'))
                        longer.append(prefix + QStringList{alternative});
                expanded = longer;
            }
            for (const QStringList& path : expanded)
                for (qsizetype length = 1; length <= path.size(); ++length)
                    paths.insert(path.first(length));
        }
        // train, runs (and its 5), bench (and its 3), lesson (and its 2), devices, fields,
        // export (and pytorch).
        QCOMPARE(paths.size(), 18);
        for (const QStringList& path : paths) {
            for (const char* help : {"--help", "-h"}) {
                const CliResult r = run_cli(path + QStringList{help});
                const QString said = path.join(' ') + ' ' + help;
                QVERIFY2(r.exit_code == 0 && !r.crashed, qPrintable(said + ": " + r.err));
                QVERIFY2(r.err.isEmpty(), qPrintable(said + " wrote to stderr: " + r.err));
                QVERIFY2(r.out.contains("scalelab-cli " + path.first()),
                         qPrintable(said + " printed no usage of it: " + r.out.left(200)));
            }
        }
    }

    // No output of a command is written over what it reads or records into: the store and its
    // journals (whether they exist or not), the --config file, a dataset file, or its other
    // output, however the path is spelt. Each is refused with exit 2 naming what the file is,
    // and every file stays byte for byte.
    void outputs_never_overwrite_an_input_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("said");
        const QStringList export_run{"runs", "export", "1", "--store", "S.sqlite"};
        const QStringList train = small_synthetic_run + QStringList{"--store", "S.sqlite"};
        QTest::newRow("export onto the store")
            << export_run + QStringList{"-o", "S.sqlite"} << "it is the run store";
        QTest::newRow("CSV export onto the store, spelt ./")
            << export_run + QStringList{"--csv", "-o", "./S.sqlite"} << "it is the run store";
        QTest::newRow("export onto the write-ahead log")
            << export_run + QStringList{"-o", "S.sqlite-wal"} << "write-ahead log";
        QTest::newRow("export onto the shared-memory index")
            << export_run + QStringList{"-o", "S.sqlite-shm"} << "shared-memory index";
        QTest::newRow("export through a symbolic link")
            << export_run + QStringList{"-o", "link-to-store"} << "it is the run store";
        QTest::newRow("export through a hard link")
            << export_run + QStringList{"-o", "hard-link-to-store"} << "it is the run store";
        QTest::newRow("metrics onto the store, spelt through its folder")
            << train + QStringList{"--metrics-out", "../outputs/S.sqlite"} << "is the run store";
        QTest::newRow("metrics onto the write-ahead log")
            << train + QStringList{"--metrics-out", "S.sqlite-wal"} << "write-ahead log";
        QTest::newRow("initial state onto the store")
            << train + QStringList{"--save-initial", "S.sqlite"} << "is the run store";
        QTest::newRow("metrics onto the --config file")
            << QStringList{"train",      "--config",      "experiment.json",
                           "--no-store", "--metrics-out", "experiment.json"}
            << "is the --config file";
        QTest::newRow("metrics onto the initial state")
            << small_synthetic_run + QStringList{"--no-store", "--metrics-out", "out.npz",
                                                 "--save-initial", "./out.npz"}
            << "is the --metrics-out file";
        QTest::newRow("metrics onto a dataset file")
            << QStringList{"train",      "--data",        "idx",
                           "--no-store", "--metrics-out", "idx/train-images-idx3-ubyte"}
            << "is a file of the dataset";
    }
    void outputs_never_overwrite_an_input() {
        QFETCH(QStringList, args);
        QFETCH(QString, said);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QVERIFY(QDir(dir.path()).mkdir("outputs") && QDir(dir.path() + "/outputs").mkdir("idx"));
        const QString at = dir.path() + "/outputs/";
        QProcess seed;
        seed.setWorkingDirectory(at);
        seed.start(SCALELAB_CLI_PATH, small_synthetic_run + QStringList{"--store", "S.sqlite"});
        QVERIFY(seed.waitForFinished(120'000) && seed.exitCode() == 0);
        write_file(at + "experiment.json", R"({"model": "mlp", "dataset": "synthetic"})");
        write_file(at + "idx/train-images-idx3-ubyte", "not read");
        QVERIFY(QFile::link(at + "S.sqlite", at + "link-to-store"));
        QVERIFY(::link(QFile::encodeName(at + "S.sqlite"),
                       QFile::encodeName(at + "hard-link-to-store")) == 0);
        const QStringList files = QDir(at).entryList(QDir::Files);
        QHash<QString, QByteArray> before;
        for (const QString& file : files)
            before[file] = file_bytes(at + file);
        before["idx/train-images-idx3-ubyte"] = file_bytes(at + "idx/train-images-idx3-ubyte");

        QProcess cli;
        cli.setWorkingDirectory(at);
        cli.start(SCALELAB_CLI_PATH, args);
        QVERIFY(cli.waitForFinished(120'000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QVERIFY2(cli.exitCode() == 2,
                 qPrintable(QString("exit %1: %2").arg(cli.exitCode()).arg(err)));
        QVERIFY2(err.contains(said), qPrintable(err));
        for (auto it = before.cbegin(); it != before.cend(); ++it)
            QVERIFY2(file_bytes(at + it.key()) == it.value(), qPrintable(it.key() + " changed"));
        QCOMPARE(QDir(at).entryList(QDir::Files), files);
    }

    // A run refused before it starts (a dataset folder that is not there, a store that is not
    // a store) leaves an older metrics file of the same name as it was: the file is opened only
    // once nothing can refuse the run.
    void a_refused_run_leaves_its_metrics_file_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("no dataset folder")
            << QStringList{"train", "--data", "/nonexistent", "--no-store"};
        QTest::newRow("a store that is not one")
            << small_synthetic_run + QStringList{"--store", "junk.sqlite"};
    }
    void a_refused_run_leaves_its_metrics_file() {
        QFETCH(QStringList, args);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString old_rows = dir.filePath("old.jsonl");
        write_file(old_rows, "{\"type\":\"start\"}\n");
        write_file(dir.filePath("junk.sqlite"), QByteArray(4096, 'x'));
        QProcess cli;
        cli.setWorkingDirectory(dir.path());
        cli.start(SCALELAB_CLI_PATH, args + QStringList{"--metrics-out", "old.jsonl"});
        QVERIFY(cli.waitForFinished(120'000));
        QVERIFY2(cli.exitCode() == 2, qPrintable(cli.readAllStandardError()));
        QCOMPARE(file_bytes(old_rows), QByteArray("{\"type\":\"start\"}\n"));
    }

    void bad_input_exits_2_with_a_message_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("unknown flag")
            << QStringList{"train", "--bogus"} << "unknown flag '--bogus'";
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
        QTest::newRow("unwritable metrics")  // a folder inside a file: not even root can
            << QStringList{"train", "--dataset", "synthetic", "--metrics-out",
                           "/etc/passwd/dir/m.jsonl"}
            << "/etc/passwd/dir/m.jsonl";
        QTest::newRow("export of sync BN between CPU processes")
            << QStringList{"export",    "pytorch", "--model", "resnet8",
                           "--sync-bn", "--out",   "/tmp/x"}
            << "sync_bn: PyTorch's SyncBatchNorm runs on GPUs only";
        QTest::newRow("export without a folder")
            << QStringList{"export", "pytorch", "--model", "cnn"} << "--out DIR";
        QTest::newRow("unwritable initial state")
            << QStringList{"train", "--dataset",  "synthetic",      "--model",
                           "mlp",   "--no-store", "--save-initial", "/etc/passwd/dir/init.npz"}
            << "--save-initial: Cannot write /etc/passwd/dir/init.npz";
        QTest::newRow("global batch not divisible by devices")
            << QStringList{"train", "--global-batch", "100", "--devices", "3"}
            << "--global-batch 100 is not divisible by 3 devices: use --global-batch 99";
        QTest::newRow("devices 0") << QStringList{"train", "--devices", "0"}
                                   << "--devices expects a whole number from 1 to 16, got '0'";
        QTest::newRow("devices 17") << QStringList{"train", "--devices", "17"}
                                    << "--devices expects a whole number from 1 to 16, got '17'";
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
                                     << "--targets expects numbers in (0, 1]";
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
        QTest::newRow("allreduce backend tpu")
            << QStringList{"bench", "allreduce", "--backend", "tpu"} << "--backend";
        QTest::newRow("allreduce gpus with cpu")
            << QStringList{"bench", "allreduce", "--gpus", "0"} << "--gpus lists CUDA GPUs";
        QTest::newRow("allreduce gpus not indices")
            << QStringList{"bench", "allreduce", "--backend", "cuda", "--gpus", "0,x"}
            << "'x' in the GPU list '0,x' is not a GPU index";
    }
    void bad_input_exits_2_with_a_message() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        const CliResult r = run_cli(args);
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void no_command_prints_the_usage_and_exits_2() {
        const CliResult r = run_cli({});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(
            r.err.startsWith("Usage:\n  scalelab-cli train [flags]        train one run, print "
                             "a summary line per epoch\n"),
            qPrintable(r.err));
        QVERIFY(r.out.isEmpty());
    }

    void deleting_a_running_run_is_refused() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        {
            // Recorded by this process, which lives on: the run stays running.
            const std::unique_ptr<RunStore> runs = RunStore::open(store);
            runs->mark_started(runs->create_run({}, "busy"), scalelab::RunInfo{});
        }
        const CliResult r = run_cli({"runs", "delete", "1", "--yes", "--store", store});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains("error: run 1 is running: stop it first (Ctrl-C in its terminal, "
                                "or Stop in the app)\n"),
                 qPrintable(r.err));
        QCOMPARE(RunStore::open(store)->list_runs().size(), std::size_t(1));
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
        // One window: the parts of its mean step add up to (nearly all of) the window's step.
        const double step_ms = 1e3 * 16 / row["images_per_s"].toDouble();
        double parts_ms = 0;
        for (const char* part : {"data_ms", "forward_ms", "backward_ms", "exposed_comm_ms",
                                 "wait_ms", "optimizer_ms"}) {
            QVERIFY2(row[part].isDouble() && row[part].toDouble() >= 0, part);
            parts_ms += row[part].toDouble();
        }
        QVERIFY2(row["forward_ms"].toDouble() > 0 && row["backward_ms"].toDouble() > 0,
                 qPrintable(lines.front()));
        QVERIFY2(parts_ms <= step_ms * 1.001 && parts_ms >= 0.5 * step_ms,
                 qPrintable(QString("parts %1 ms of a %2 ms step: %3")
                                .arg(parts_ms)
                                .arg(step_ms)
                                .arg(lines.front())));
    }

    // On GPUs the same row, named as measured on GPUs; without one, the machine's reason.
    void bench_train_on_gpus_measures_or_says_why_not() {
        const scalelab::DeviceInventory inventory = scalelab::discover_devices();
        const CliResult r =
            run_cli({"bench", "train", "--device", "gpu", "--model", "cnn", "--batch", "64",
                     "--devices", "1", "--warmup-steps", "1", "--windows", "1", "--json"});
        QVERIFY2(!r.crashed, qPrintable(r.err));
        if (inventory.gpus.empty()) {
            QVERIFY_EXIT(r, 2);
            QVERIFY2(r.err.contains("error: 1 GPU asked for, but no GPU can be used here: " +
                                    QString::fromStdString(inventory.no_gpu_reason)),
                     qPrintable(r.err));
            QVERIFY(r.out.isEmpty());
            return;
        }
        QVERIFY_EXIT(r, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        const QJsonObject row = QJsonDocument::fromJson(lines.front().toUtf8()).object();
        QCOMPARE(row["device"].toString(), QString("gpu"));
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

    // One device exchanges nothing: measured, with a warning that says what the rows mean.
    void bench_allreduce_on_one_device_warns_that_nothing_is_exchanged() {
        const CliResult r = run_cli(
            {"bench", "allreduce", "--devices", "1", "--sizes", "4K", "--iters", "2", "--json"});
        QVERIFY_EXIT(r, 0);
        QCOMPARE(r.out.split('\n', Qt::SkipEmptyParts).size(), 1);
        QVERIFY2(r.err.contains("one device: an all-reduce has nothing to exchange"),
                 qPrintable(r.err));
        const CliResult two = run_cli(
            {"bench", "allreduce", "--devices", "2", "--sizes", "4K", "--iters", "2", "--json"});
        QVERIFY_EXIT(two, 0);
        QVERIFY2(!two.err.contains("one device"), qPrintable(two.err));
    }

    // The whole GPU path end to end where there is a GPU (cnn has every kind of layer the GPU
    // backend runs: convolution, batch norm, pooling, dropout, linear, the loss); where there is
    // none, the machine's reason, like a flag to fix, and nothing trained.
    void train_on_a_gpu_trains_or_says_why_not() {
        const scalelab::DeviceInventory inventory = scalelab::discover_devices();
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        QStringList args = small_synthetic_run +
                           QStringList{"--device", "gpu", "--metrics-out", metrics, "--no-store"};
        args[args.indexOf("mlp")] = "cnn";
        const CliResult r = run_cli(args);
        QVERIFY2(!r.crashed, qPrintable(r.err));
        if (inventory.gpus.empty()) {
            QVERIFY_EXIT(r, 2);
            QVERIFY2(r.err.contains("error: 1 GPU asked for, but no GPU can be used here: " +
                                    QString::fromStdString(inventory.no_gpu_reason)),
                     qPrintable(r.err));
            QVERIFY(!QFile::exists(metrics) || QFileInfo(metrics).size() == 0);
            return;
        }
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("finished"), qPrintable(r.out));
        const QList<QJsonObject> steps = rows_of_type(read_rows(metrics), "step");
        QCOMPARE(steps.size(), 8);
        QVERIFY(steps.back()["loss"].toDouble() < steps.front()["loss"].toDouble());
    }

    // A run no GPU here can take (GPU 99: none has it) is refused before the store and the data
    // are touched, with the engine's own message: the data folder given does not exist and is
    // never mentioned, and neither the store nor the metrics file is created.
    void a_gpu_run_is_refused_before_the_store_and_data_are_touched() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.db");
        const QString metrics = dir.filePath("m.jsonl");
        const QString missing_data = dir.filePath("no-such-folder");
        const CliResult r =
            run_cli({"train", "--dataset", "fashion-mnist", "--data", missing_data, "--device",
                     "gpu", "--gpus", "99", "--store", store, "--metrics-out", metrics});
        QVERIFY_EXIT(r, 2);
        const scalelab::GpuSelection expected =
            scalelab::select_gpus({99}, scalelab::discover_devices());
        QCOMPARE(expected.problems.size(), std::size_t{1});
        QVERIFY2(r.err.contains(QString::fromStdString(expected.problems.front())),
                 qPrintable(r.err));
        QVERIFY2(!r.err.contains(missing_data), qPrintable(r.err));
        QVERIFY(!QFile::exists(store));
        QVERIFY(!QFile::exists(metrics));
    }

    void bench_allreduce_on_gpus_measures_or_says_why_not() {
        const scalelab::DeviceInventory inventory = scalelab::discover_devices();
        const CliResult r = run_cli(
            {"bench", "allreduce", "--backend", "cuda", "--sizes", "1M", "--iters", "3", "--json"});
        QVERIFY2(!r.crashed, qPrintable(r.err));
        if (inventory.gpus.empty()) {
            // No GPU: a message with the machine's reason, like a flag to fix; nothing measured.
            QVERIFY_EXIT(r, 2);
            QVERIFY2(r.err.contains("error: --backend cuda measures NCCL between GPUs, but no "
                                    "GPU can be used here: " +
                                    QString::fromStdString(inventory.no_gpu_reason)),
                     qPrintable(r.err));
            QVERIFY(r.out.isEmpty());
            return;
        }
        QVERIFY_EXIT(r, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 1);
        const QJsonObject row = QJsonDocument::fromJson(lines.front().toUtf8()).object();
        const auto gpus = static_cast<int>(inventory.gpus.size());
        QCOMPARE(row["devices"].toInt(), gpus);
        QCOMPARE(row["bytes"].toInteger(), qint64(1) << 20);
        const double algbw = row["algbw_GBs"].toDouble();
        // One GPU's all-reduce does no work, so its time may read 0; the command says so.
        QVERIFY2(gpus == 1 || (row["time_ms"].toDouble() > 0.0 && algbw > 0.0),
                 qPrintable(lines.front()));
        QCOMPARE(r.err.contains("one device: an all-reduce has nothing to exchange"), gpus == 1);
        const double busbw = algbw * 2.0 * (gpus - 1) / gpus;
        QVERIFY(qAbs(row["busbw_GBs"].toDouble() - busbw) <= 1e-9 * algbw);
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

    void runs_help_lists_the_subcommands() {
        CliResult r = run_cli({"runs", "--help"});
        QVERIFY_EXIT(r, 0);
        for (const char* word : {"list", "show", "export", "import", "delete", "runs.sqlite"})
            QVERIFY2(r.out.contains(word), word);
        r = run_cli({"runs", "export", "--help"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(r.out.contains("--output") && r.out.contains("--csv") && r.out.contains("--store"));
        r = run_cli({"train", "--help"});
        QVERIFY_EXIT(r, 0);
        for (const char* flag : {"--store", "--no-store", "--name", "--tag"})
            QVERIFY2(r.out.contains(flag), flag);
        // The default store's place, under this test's XDG_DATA_HOME.
        QVERIFY2(r.out.contains(data_home_.path()), qPrintable(r.out));
    }

    void runs_bad_input_exits_2_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QString>("message");
        QTest::newRow("no subcommand") << QStringList{"runs"} << "list, show";
        QTest::newRow("unknown subcommand") << QStringList{"runs", "purge"} << "'purge'";
        QTest::newRow("show without id") << QStringList{"runs", "show"} << "needs a run id";
        QTest::newRow("show two ids") << QStringList{"runs", "show", "1", "2"} << "one run";
        QTest::newRow("id not a number")
            << QStringList{"runs", "show", "first"} << "'first' is not a run id";
        QTest::newRow("export without -o") << QStringList{"runs", "export", "1"} << "-o FILE";
        QTest::newRow("import without file") << QStringList{"runs", "import"} << "one file";
        QTest::newRow("list with an id") << QStringList{"runs", "list", "3"} << "'3'";
        QTest::newRow("no-store with a name")
            << QStringList{"train", "--no-store", "--name", "x"} << "--no-store";
        QTest::newRow("missing import file")
            << QStringList{"runs", "import", "/nonexistent/runs.scalelab.json"}
            << "/nonexistent/runs.scalelab.json";
    }
    void runs_bad_input_exits_2() {
        QFETCH(QStringList, args);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const CliResult r = run_cli(args + QStringList{"--store", dir.filePath("runs.sqlite")});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    // A mistyped --store is an error for the commands that read: none creates a store (or its
    // folder) and then reports it empty.
    void read_commands_never_create_a_store() {
        QTemporaryDir dir;
        const QString typo = dir.filePath("TYPO/x.sqlite");
        const QList<QStringList> commands{{"runs", "list"},
                                          {"runs", "show", "1"},
                                          {"runs", "export", "1", "-o", dir.filePath("o.json")},
                                          {"runs", "delete", "1"}};
        for (const QStringList& command : commands) {
            const CliResult r = run_cli(command + QStringList{"--store", typo});
            QVERIFY_EXIT(r, 2);
            QVERIFY2(r.err.contains("there is no run store at " + typo), qPrintable(r.err));
            QVERIFY2(!QFileInfo::exists(dir.filePath("TYPO")), qPrintable(command.join(' ')));
        }
    }

    void trained_run_is_listed_and_shown() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        CliResult r =
            run_cli(small_synthetic_run + QStringList{"--store", store, "--name", "mlp, small",
                                                      "--tag", "smoke", "--tag", "ci"});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("recorded as run 1 in"), qPrintable(r.out));

        r = run_cli({"runs", "list", "--store", store});
        QVERIFY_EXIT(r, 0);
        const QStringList lines = r.out.split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.size(), 2);
        for (const char* header : {"id", "name", "state", "global batch", "best val acc"})
            QVERIFY2(lines[0].contains(header), header);
        for (const char* cell : {"mlp, small", "finished", "mlp", "64", "sgd"})
            QVERIFY2(lines[1].contains(cell), qPrintable(lines[1]));

        r = run_cli({"runs", "list", "--json", "--store", store});
        QVERIFY_EXIT(r, 0);
        const QJsonObject row = QJsonDocument::fromJson(r.out.toUtf8()).object();
        QCOMPARE(row["id"].toInt(), 1);
        QCOMPARE(row["name"].toString(), QString("mlp, small"));
        QCOMPARE(row["tags"].toArray(), (QJsonArray{"smoke", "ci"}));
        QCOMPARE(row["state"].toString(), QString("finished"));
        QCOMPARE(row["global_batch"].toInt(), 64);
        QCOMPARE(row["steps"].toInt(), 8);
        QVERIFY(row["best_val_accuracy"].toDouble() > 0);

        r = run_cli({"runs", "show", "1", "--store", store});
        QVERIFY_EXIT(r, 0);
        for (const char* part : {"run 1: mlp, small", "smoke, ci", "synthetic_train: 512",
                                 "configuration:", "step 8, 1 epoch", "best val acc:"})
            QVERIFY2(r.out.contains(part), qPrintable(part + QString(" not in:\n") + r.out));
    }

    void runs_go_to_the_default_store_unless_told() {
        CliResult r = run_cli(small_synthetic_run + QStringList{"--name", "to the default"});
        QVERIFY_EXIT(r, 0);
        r = run_cli(small_synthetic_run + QStringList{"--no-store"});
        QVERIFY_EXIT(r, 0);
        QVERIFY(!r.out.contains("recorded as run"));
        r = run_cli({"runs", "list", "--json"});
        QVERIFY_EXIT(r, 0);
        const QStringList names = [&] {
            QStringList out;
            for (const QString& line : r.out.split('\n', Qt::SkipEmptyParts))
                out.append(QJsonDocument::fromJson(line.toUtf8()).object()["name"].toString());
            return out;
        }();
        QVERIFY2(names.contains("to the default"), qPrintable(r.out));
        QCOMPARE(names.count("to the default"), 1);
    }

    // Names, tags and messages from an import reach the terminal with their control characters
    // escaped: a NUL does not cut the output short, an escape sequence changes nothing.
    void stored_text_is_printed_without_control_characters() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        QVERIFY_EXIT(run_cli(small_synthetic_run + QStringList{"--store", store}), 0);
        const QString file = dir.filePath("one.scalelab.json");
        QVERIFY_EXIT(run_cli({"runs", "export", "1", "-o", file, "--store", store}), 0);
        QJsonObject document = QJsonDocument::fromJson(file_bytes(file)).object();
        QJsonArray runs = document["runs"].toArray();
        QJsonObject run = runs[0].toObject();
        run["name"] = QStringLiteral("red\x1b[31m\x00 after the NUL");
        run["tags"] = QJsonArray{QStringLiteral("bell\x07")};
        run["message"] = QStringLiteral("line\roverwritten");
        runs[0] = run;
        document["runs"] = runs;
        write_file(file, QJsonDocument(document).toJson());
        QVERIFY_EXIT(run_cli({"runs", "import", file, "--store", store}), 0);

        for (const QStringList& command :
             {QStringList{"runs", "list"}, QStringList{"runs", "show", "2"}}) {
            const CliResult r = run_cli(command + QStringList{"--store", store});
            QVERIFY_EXIT(r, 0);
            for (const char control : {'\x1b', '\x07', '\r'})
                QVERIFY2(!r.out.contains(QChar(control)), qPrintable(command.join(' ')));
            QVERIFY2(r.out.contains("red\\x1b[31m\\x00 after"), qPrintable(r.out));
        }
        const CliResult show = run_cli({"runs", "show", "2", "--store", store});
        QVERIFY2(show.out.contains("bell\\x07") && show.out.contains("line\\x0doverwritten"),
                 qPrintable(show.out));
    }

    void export_import_round_trip() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite"), other = dir.filePath("other.sqlite");
        QVERIFY_EXIT(run_cli(small_synthetic_run + QStringList{"--store", store}), 0);
        {
            // A second run, cancelled before it started: no metrics.
            scalelab::RunSpec spec;
            spec.lr = 0.1;
            const std::unique_ptr<RunStore> runs = RunStore::open(store);
            runs->mark_ended(runs->create_run(spec, "never started"), RunState::Cancelled,
                             "stopped while queued");
        }

        const QString file = dir.filePath("two.scalelab.json");
        CliResult r = run_cli({"runs", "export", "1", "2", "-o", file, "--store", store});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("exported 2 runs"), qPrintable(r.out));
        r = run_cli({"runs", "import", file, "--store", other});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("imported run 1") && r.out.contains("imported run 2"),
                 qPrintable(r.out));
        // Imported again: new runs beside the first copies, nothing overwritten.
        r = run_cli({"runs", "import", file, "--store", other});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("imported run 3") && r.out.contains("imported run 4"),
                 qPrintable(r.out));

        // The copies export to the same runs, every row included.
        const QString again = dir.filePath("again.scalelab.json");
        QVERIFY_EXIT(run_cli({"runs", "export", "3", "4", "--output", again, "--store", other}), 0);
        const QJsonArray first =
            QJsonDocument::fromJson(file_bytes(file)).object()["runs"].toArray();
        const QJsonArray second =
            QJsonDocument::fromJson(file_bytes(again)).object()["runs"].toArray();
        QCOMPARE(second.size(), 2);
        QCOMPARE(second, first);
        QCOMPARE(first[1].toObject()["config"].toObject()["lr"].toDouble(), 0.1);

        const QString csv = dir.filePath("metrics.csv");
        QVERIFY_EXIT(run_cli({"runs", "export", "1", "--csv", "-o", csv, "--store", store}), 0);
        const QStringList lines =
            QString::fromUtf8(file_bytes(csv)).split('\n', Qt::SkipEmptyParts);
        QCOMPARE(lines.front(), QString("run,run_id,group,step,epoch,wall_time_s,metric,value"));
        qsizetype rows = 0;
        for (const QJsonValue& curve : first[0].toObject()["metrics"].toObject())
            rows += curve.toArray().size();
        QVERIFY(rows > 0);
        QCOMPARE(lines.size(), rows + 1);
    }

    void delete_asks_or_needs_yes() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        {
            const std::unique_ptr<RunStore> runs = RunStore::open(store);
            for (const char* name : {"first", "second"})
                runs->mark_ended(runs->create_run({}, name), RunState::Finished, {});
        }

        CliResult r = run_cli({"runs", "delete", "1", "--store", store});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains("--yes"), qPrintable(r.err));
        r = run_cli({"runs", "delete", "1", "3", "--yes", "--store", store});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains("no run 3"), qPrintable(r.err));
        QCOMPARE(RunStore::open(store)->list_runs().size(), std::size_t(2));

        r = run_cli({"runs", "delete", "1", "--yes", "--store", store});
        QVERIFY_EXIT(r, 0);
        QVERIFY2(r.out.contains("deleted 1 run"), qPrintable(r.out));
        const std::vector<scalelab::StoredRun> left = RunStore::open(store)->list_runs();
        QCOMPARE(left.size(), std::size_t(1));
        QCOMPARE(left.front().id, std::int64_t(2));
        QVERIFY_EXIT(run_cli({"runs", "show", "1", "--store", store}), 2);
    }

    void unknown_ids_and_malformed_imports_change_nothing() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        QVERIFY_EXIT(run_cli(small_synthetic_run + QStringList{"--store", store}), 0);
        const QString file = dir.filePath("out.scalelab.json");
        CliResult r = run_cli({"runs", "export", "1", "7", "-o", file, "--store", store});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains("no run 7"), qPrintable(r.err));
        QVERIFY(!QFile::exists(file));

        QVERIFY_EXIT(run_cli({"runs", "export", "1", "-o", file, "--store", store}), 0);
        // A second copy of the run whose last loss row goes back a step: the file is refused.
        QJsonObject document = QJsonDocument::fromJson(file_bytes(file)).object();
        QJsonArray runs = document["runs"].toArray();
        QJsonObject broken = runs[0].toObject();
        QJsonObject metrics = broken["metrics"].toObject();
        QJsonArray loss = metrics["train_loss"].toArray();
        loss.append(loss.first());
        metrics["train_loss"] = loss;
        broken["metrics"] = metrics;
        runs.append(broken);
        document["runs"] = runs;
        const QString bad = dir.filePath("bad.scalelab.json");
        write_file(bad, QJsonDocument(document).toJson());
        r = run_cli({"runs", "import", bad, "--store", store});
        QVERIFY_EXIT(r, 2);
        QVERIFY2(r.err.contains("run 2") && r.err.contains("metrics.train_loss row 9") &&
                     r.err.contains("nothing was imported"),
                 qPrintable(r.err));
        QCOMPARE(RunStore::open(store)->list_runs().size(), std::size_t(1));
    }

    void corrupt_store_exits_2_and_stays_as_it_was() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        QByteArray garbage;
        for (int i = 0; i < 512; ++i)
            garbage += "this is not an SQLite database. ";
        write_file(store, garbage);
        for (const QStringList& args :
             {QStringList{"runs", "list"}, QStringList{"runs", "show", "1"},
              QStringList{"runs", "import", dir.filePath("missing.scalelab.json")},
              small_synthetic_run}) {
            const CliResult r = run_cli(args + QStringList{"--store", store});
            QVERIFY_EXIT(r, 2);
            QVERIFY2(r.err.contains(store), qPrintable(r.err));
            QVERIFY2(!r.out.contains("training"), "train stops before it loads data");
            QCOMPARE(file_bytes(store), garbage);
        }
    }

    // A metrics file that cannot be written whole (the file size limit standing in for a full
    // disk) is an error: exit 1 with the reason, though the run itself trained to its end.
    void a_metrics_file_that_cannot_be_written_whole_exits_1() {
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        QProcess process;
        limit_file_size(process, 16 * 1024);
        process.start(SCALELAB_CLI_PATH,
                      {"train", "--dataset", "synthetic", "--model", "mlp", "--epochs", "2",
                       "--batch", "16", "--no-store", "--metrics-out", metrics});
        QVERIFY(process.waitForFinished(60'000));
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), 1);
        QVERIFY2(err.contains("error: writing the metrics file " + metrics + " failed by step"),
                 qPrintable(err));
        QVERIFY2(err.contains("File too large"), qPrintable(err));
    }

    // A write to the store that fails (here: the file size limit, as a full disk would) stops
    // the run, which ends as failed with the reason: exit 1.
    void failed_recording_stops_the_run() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite");
        QProcess process;
        limit_file_size(process, 96 * 1024);
        process.start(SCALELAB_CLI_PATH, {"train", "--dataset", "synthetic", "--synthetic-train",
                                          "2048", "--synthetic-test", "256", "--model", "mlp",
                                          "--epochs", "1000", "--batch", "16", "--store", store});
        QVERIFY(process.waitForFinished(60'000));
        const QString out = QString::fromUtf8(process.readAllStandardOutput());
        const QString err = QString::fromUtf8(process.readAllStandardError());
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QVERIFY2(process.exitCode() == 1, qPrintable(err));
        // The reason names the store, on stderr and on the run's last line.
        QVERIFY2(err.contains("error: ") && err.contains(store), qPrintable(err));
        QVERIFY2(out.contains("failed at epoch") && out.contains(store), qPrintable(out));
        const scalelab::StoredRun run = RunStore::open(store)->run(1);
        QVERIFY2(run.state == RunState::Failed || run.state == RunState::Interrupted,
                 qPrintable(QString::fromUtf8(scalelab::to_string(run.state))));
    }

    // Killed without warning, a recording run keeps what was committed up to about the last
    // second (the recorder commits at least once a second) and is found interrupted.
    void killed_run_is_interrupted_with_its_metrics() {
        QTemporaryDir dir;
        const QString store = dir.filePath("runs.sqlite"), metrics = dir.filePath("m.jsonl");
        QProcess process;
        process.start(SCALELAB_CLI_PATH,
                      {"train", "--dataset", "synthetic", "--synthetic-train", "2048",
                       "--synthetic-test", "256", "--model", "mlp", "--epochs", "1000", "--batch",
                       "16", "--store", store, "--metrics-out", metrics});
        // The header line comes once the store is open and the run created.
        QVERIFY(process.waitForReadyRead(60'000));
        QVERIFY(QString(process.readLine()).startsWith("training"));
        {
            const std::unique_ptr<RunStore> watcher = RunStore::open(store);
            QTRY_VERIFY_WITH_TIMEOUT(last_stored_step(*watcher, 1) > 0, 20'000);
            // Some more commits, so that the kill lands well into the run.
            QElapsedTimer recording;
            recording.start();
            QTRY_VERIFY_WITH_TIMEOUT(recording.elapsed() > 2500, 10'000);
            QCOMPARE(watcher->run(1).state, RunState::Running);
        }
        process.kill();
        QVERIFY(process.waitForFinished(10'000));
        QCOMPARE(process.exitStatus(), QProcess::CrashExit);

        const std::unique_ptr<RunStore> store_after = RunStore::open(store);
        const scalelab::StoredRun run = store_after->run(1);
        QCOMPARE(run.state, RunState::Interrupted);
        const std::int64_t stored = last_stored_step(*store_after, 1);
        QCOMPARE(run.steps, stored);
        // The process reached at least the last step its JSONL file holds (rows are buffered,
        // so a few more may be lost); what the store lacks is at most the last second or so
        // of steps: one commit interval, and one more for a writer thread kept waiting on this
        // shared machine.
        const LastSteps reached = last_steps(read_rows(metrics), 2.0);
        QVERIFY2(reached.last > 0, "the JSONL file holds no step");
        QVERIFY2(stored <= reached.last + 64, qPrintable(QString::number(stored)));
        QVERIFY2(stored >= reached.since,
                 qPrintable(QStringLiteral("stored up to step %1; the process reached step %2 "
                                           "and was at step %3 two seconds before")
                                .arg(stored)
                                .arg(reached.last)
                                .arg(reached.since)));
        // Every step up to the last one stored has its rows.
        const std::vector<scalelab::MetricRow> rows = store_after->metrics(1);
        const auto losses = std::count_if(rows.begin(), rows.end(), [](const auto& row) {
            return row.metric == scalelab::Metric::TrainLoss;
        });
        QCOMPARE(std::int64_t(losses), stored);
    }

    // Ctrl-C (SIGINT) and SIGTERM (kill, systemd, Slurm) both cancel the run, which ends as
    // cancelled with its end row and store entry written; the exit code says which it was.
    void a_signal_cancels_and_records_the_run_data() {
        QTest::addColumn<int>("signal");
        QTest::addColumn<int>("exit_code");
        QTest::newRow("SIGINT") << int(SIGINT) << 130;
        QTest::newRow("SIGTERM") << int(SIGTERM) << 143;
    }

    void a_signal_cancels_and_records_the_run() {
        QFETCH(int, signal);
        QFETCH(int, exit_code);
        QTemporaryDir dir;
        const QString metrics = dir.filePath("m.jsonl");
        QProcess process;
        process.start(SCALELAB_CLI_PATH, {"train", "--dataset", "synthetic", "--model", "mlp",
                                          "--epochs", "1000", "--batch", "16", "--metrics-out",
                                          metrics, "--store", dir.filePath("runs.sqlite")});
        // The header line is printed once a signal cancels the run instead of killing it.
        QVERIFY(process.waitForReadyRead(60'000));
        QVERIFY(QString(process.readLine()).startsWith("training"));
        ::kill(pid_t(process.processId()), signal);
        QVERIFY(process.waitForFinished(60'000));
        QCOMPARE(process.exitStatus(), QProcess::NormalExit);
        QCOMPARE(process.exitCode(), exit_code);
        const QList<QJsonObject> rows = read_rows(metrics);
        QVERIFY(!rows.isEmpty());
        QCOMPARE(rows.back()["status"].toString(), QString("cancelled"));
        const auto store = scalelab::RunStore::open(dir.filePath("runs.sqlite"));
        QCOMPARE(store->list_runs().front().state, scalelab::RunState::Cancelled);
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
