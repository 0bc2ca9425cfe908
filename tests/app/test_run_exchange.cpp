#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cstring>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "run_exchange.h"
#include "run_fixtures.h"
#include "run_spec_json.h"
#include "run_store.h"
#include "store_json.h"

using namespace scalelab;

namespace {

// A run as a recorder leaves it: started, `steps` steps of training rows (the loss of the last
// one not finite: it diverged), an evaluation every 4 steps, ended as diverged.
std::int64_t record_run(RunStore& store, const QString& name, const QStringList& tags, int steps) {
    RunSpec spec;
    spec.model = "mlp";
    spec.dataset = "synthetic";
    spec.devices = 2;
    spec.batch = 32;
    spec.lr = 0.125;
    spec.optimizer = OptimizerKind::Lars;
    const std::int64_t id = store.create_run(spec, name, tags);
    RunInfo info;
    info.devices = 2;
    info.threads_per_device = 1;
    info.cores = 2;
    info.global_batch = 64;
    info.steps_per_epoch = 4;
    info.parameters = 123456;
    info.warnings = {"more devices than cores"};
    store.mark_started(id, info);

    std::vector<MetricRow> rows;
    std::vector<EpochMetrics> epochs;
    for (int step = 1; step <= steps; ++step) {
        const int epoch = (step + 3) / 4;
        const double seconds = 0.1 * step + 1.0 / 3.0;
        const double loss =
            step == steps ? std::numeric_limits<double>::infinity() : 2.0 / (step + 0.7);
        for (const auto& [metric, value] :
             {std::pair{Metric::TrainLoss, loss}, std::pair{Metric::TrainAccuracy, step / 97.0},
              std::pair{Metric::LearningRate, 0.125}, std::pair{Metric::ImagesPerSecond, 640.5}})
            rows.push_back({.step = step,
                            .epoch = epoch,
                            .wall_time = seconds,
                            .metric = metric,
                            .value = value});
        if (step % 4 == 0) {
            const double accuracy = 0.5 + 0.1 * epoch;
            rows.push_back({step, epoch, seconds, Metric::ValLoss, 1.0 / epoch});
            rows.push_back({step, epoch, seconds, Metric::ValAccuracy, accuracy});
            EpochMetrics done;
            done.epoch = epoch;
            done.step = step;
            done.val_accuracy = accuracy;
            done.val_loss = 1.0 / epoch;
            done.epoch_seconds = 0.4;
            done.images_per_s = 640.5;
            done.steady_images_per_s = 650.25;
            if (epoch == 2)
                done.reached = {{.target = 0.7,
                                 .seconds = seconds,
                                 .step = step,
                                 .epoch = epoch,
                                 .images = 64.0 * step}};
            epochs.push_back(done);
        }
    }
    store.append_metrics(id, rows, epochs);
    store.mark_ended(id, RunState::Diverged, "loss became inf at step " + QString::number(steps));
    return id;
}

// JSON has no infinity: a value that is not finite is written as null and read back as NaN.
bool same_value(double a, double b) {
    return (!std::isfinite(a) && !std::isfinite(b)) || a == b;
}

void compare_rows(const std::vector<MetricRow>& got, const std::vector<MetricRow>& expected) {
    QCOMPARE(got.size(), expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        QCOMPARE(got[i].step, expected[i].step);
        QCOMPARE(got[i].epoch, expected[i].epoch);
        QCOMPARE(got[i].wall_time, expected[i].wall_time);
        QCOMPARE(got[i].metric, expected[i].metric);
        QVERIFY2(same_value(got[i].value, expected[i].value),
                 qPrintable(QStringLiteral("row %1: %2 != %3")
                                .arg(i)
                                .arg(got[i].value)
                                .arg(expected[i].value)));
    }
}

// Every field but the id (and the state, for runs imported while active).
void compare_runs(const StoredRun& got, const StoredRun& expected) {
    QCOMPARE(got.name, expected.name);
    QCOMPARE(got.tags, expected.tags);
    QCOMPARE(got.group.isEmpty(), expected.group.isEmpty());  // the id is new (groups below)
    QCOMPARE(got.message, expected.message);
    QCOMPARE(run_spec_to_json(got.spec), run_spec_to_json(expected.spec));
    QCOMPARE(got.started, expected.started);
    QCOMPARE(run_info_to_json(got.info), run_info_to_json(expected.info));
    QCOMPARE(got.machine, expected.machine);
    QCOMPARE(got.created, expected.created);
    QCOMPARE(got.started_at, expected.started_at);
    QCOMPARE(got.ended_at, expected.ended_at);
    QCOMPARE(got.steps, expected.steps);
    QCOMPARE(got.epochs, expected.epochs);
    QCOMPARE(got.train_seconds, expected.train_seconds);
    QCOMPARE(got.best_val_accuracy, expected.best_val_accuracy);
    QCOMPARE(got.mean_images_per_s, expected.mean_images_per_s);
    QCOMPARE(targets_to_json(got.targets), targets_to_json(expected.targets));
}

double last_loss(const RunStore& store, std::int64_t id) {
    const std::vector<MetricRow> rows = store.metrics(id);
    const auto last = std::find_if(rows.rbegin(), rows.rend(), [](const MetricRow& row) {
        return row.metric == Metric::TrainLoss;
    });
    return last == rows.rend() ? 0.0 : last->value;
}

// A file as small as it may be: optional fields left out.
const QByteArray minimal_file = R"({"format": "scalelab-runs", "version": 1, "runs": [
    {"name": "by hand", "state": "finished", "config": {"model": "mlp", "batch": 8},
     "metrics": {"train_loss": [[1, 1, 0.25, 2.5], [2, 1, 0.5, null]]}}]})";

QJsonObject as_object(const QByteArray& document) {
    return QJsonDocument::fromJson(document).object();
}

QByteArray as_document(const QJsonObject& file) {
    return QJsonDocument(file).toJson();
}

// A change to the second run of an exchange file, which should make the whole file refused.
struct BrokenRun {
    const char* name;
    std::function<void(QJsonObject& run)> breaks;
    QStringList reason;  // what the message must say, besides "run 2"
};

QJsonArray rows_of(const QJsonObject& run, const char* metric) {
    return run["metrics"].toObject()[metric].toArray();
}

void set_rows(QJsonObject& run, const char* metric, const QJsonArray& rows) {
    QJsonObject metrics = run["metrics"].toObject();
    metrics[metric] = rows;
    run["metrics"] = metrics;
}

void set_row(QJsonObject& run, const char* metric, qsizetype index, const QJsonArray& row) {
    QJsonArray rows = rows_of(run, metric);
    rows[index] = row;
    set_rows(run, metric, rows);
}

void set_in(QJsonObject& run, const char* object, const char* key, const QJsonValue& value) {
    QJsonObject inner = run[object].toObject();
    inner[key] = value;
    run[object] = inner;
}

const std::vector<BrokenRun>& broken_runs() {
    static const std::vector<BrokenRun> cases{
        {"unknown metric",
         [](QJsonObject& run) { set_rows(run, "train_lossy", rows_of(run, "train_loss")); },
         {"metrics.train_lossy", "unknown metric", "train_loss"}},
        {"step not a number",
         [](QJsonObject& run) {
             set_row(run, "train_loss", 2, {"three", 1, 0.5, 1.0});
         },
         {"metrics.train_loss row 3", "step", "\"three\""}},
        {"steps going back",
         [](QJsonObject& run) {
             set_row(run, "lr", 3, {2, 1, 0.5, 0.125});
         },
         {"metrics.lr row 4", "step 2 follows step 3", "increase"}},
        {"epochs going back",
         [](QJsonObject& run) {
             set_row(run, "lr", 5, {6, 1, 0.5, 0.125});
         },
         {"metrics.lr row 6", "epoch 1 follows epoch 2"}},
        {"row of three",
         [](QJsonObject& run) {
             set_row(run, "val_accuracy", 0, {4, 1, 0.5});
         },
         {"metrics.val_accuracy row 1", "3 items"}},
        {"value a string",
         [](QJsonObject& run) {
             set_row(run, "train_accuracy", 1, {2, 1, 0.5, "0.3"});
         },
         {"metrics.train_accuracy row 2", "value", "\"0.3\""}},
        {"negative wall time",
         [](QJsonObject& run) {
             set_row(run, "train_accuracy", 0, {1, 1, -0.5, 0.3});
         },
         {"metrics.train_accuracy row 1", "wall time"}},
        {"metrics not an object",
         [](QJsonObject& run) { run["metrics"] = QJsonArray{}; },
         {"metrics", "must be an object"}},
        {"config of the wrong type",
         [](QJsonObject& run) { set_in(run, "config", "batch", "big"); },
         {"config", "\"batch\""}},
        {"config with an unknown key",
         [](QJsonObject& run) { set_in(run, "config", "wings", 2); },
         {"config", "unknown key \"wings\""}},
        {"config missing", [](QJsonObject& run) { run.remove("config"); }, {"config: missing"}},
        {"unknown state",
         [](QJsonObject& run) { run["state"] = "exploded"; },
         {"state", "\"exploded\"", "interrupted"}},
        {"bad date",
         [](QJsonObject& run) { run["created"] = "yesterday"; },
         {"created", "ISO 8601"}},
        {"tag not a string",
         [](QJsonObject& run) {
             run["tags"] = QJsonArray{"a", 3};
         },
         {"tags", "item 2"}},
        {"devices -1",
         [](QJsonObject& run) { set_in(run, "info", "devices", -1); },
         {"info.devices", "whole number"}},
        {"target without its accuracy",
         [](QJsonObject& run) {
             QJsonArray targets = run["summary"].toObject()["targets"].toArray();
             QJsonObject target = targets[0].toObject();
             target.remove("target");
             targets[0] = target;
             set_in(run, "summary", "targets", targets);
         },
         {"summary.targets item 1.target", "missing"}},
        {"unknown field", [](QJsonObject& run) { run["colour"] = 3; }, {"colour", "unknown field"}},
        {"name missing", [](QJsonObject& run) { run.remove("name"); }, {"name: missing"}},
        {"more devices than its config ran",
         [](QJsonObject& run) { set_in(run, "info", "devices", 1000); },
         {"info.devices", "1000 devices, but its config asks for 2"}},
        {"name of 201 characters",
         [](QJsonObject& run) { run["name"] = QString(201, QLatin1Char('n')); },
         {"name", "at most 200 characters, this one has 201"}},
        {"33 tags",
         [](QJsonObject& run) {
             QJsonArray tags;
             for (int i = 0; i < 33; ++i)
                 tags.append(QStringLiteral("t%1").arg(i));
             run["tags"] = tags;
         },
         {"tags", "at most 32 tags"}},
        {"message of 70000 characters",
         [](QJsonObject& run) { run["message"] = QString(70'000, QLatin1Char('m')); },
         {"message", "70000 characters"}},
    };
    return cases;
}

}  // namespace

class TestRunExchange : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        QVERIFY(dir_->isValid());
        source_ = RunStore::open(dir_->filePath("source.sqlite"));
        target_ = RunStore::open(dir_->filePath("target.sqlite"));
        diverged_ = record_run(*source_, "lars, \"2\" dev × 32", {"sweep", "größe"}, 10);
        queued_ = source_->create_run(RunSpec{}, "waiting", {});
    }
    void cleanup() {
        source_.reset();
        target_.reset();
        dir_.reset();
    }

    void round_trip_keeps_every_row_and_field() {
        const QByteArray file = export_runs(*source_, {diverged_, queued_});
        const std::vector<std::int64_t> ids = import_runs(*target_, file);
        QCOMPARE(ids.size(), std::size_t(2));

        const StoredRun original = source_->run(diverged_), copy = target_->run(ids[0]);
        compare_runs(copy, original);
        QCOMPARE(copy.state, RunState::Diverged);
        QVERIFY(!copy.targets.empty());
        QVERIFY(!std::isfinite(last_loss(*source_, diverged_)));
        QVERIFY(!std::isfinite(last_loss(*target_, ids[0])));
        compare_rows(target_->metrics(ids[0]), source_->metrics(diverged_));

        // A run that had not ended when exported will not end here: it is imported as
        // interrupted, with everything else kept.
        const StoredRun waiting = target_->run(ids[1]);
        QCOMPARE(waiting.state, RunState::Interrupted);
        QVERIFY(!waiting.message.isEmpty());  // why it is interrupted
        StoredRun expected = source_->run(queued_);
        expected.message = waiting.message;
        compare_runs(waiting, expected);
        QVERIFY(target_->metrics(ids[1]).empty());
    }

    // A run store copied back from a cluster job: its runs are added as an exchange file's are.
    void a_run_store_imports_into_another() {
        QVERIFY(is_sqlite_file(source_->path()));
        const std::vector<std::int64_t> ids = import_runs_from_store(*target_, source_->path());
        QCOMPARE(ids.size(), std::size_t(2));
        compare_runs(target_->run(ids[0]), source_->run(diverged_));
        compare_rows(target_->metrics(ids[0]), source_->metrics(diverged_));
        QCOMPARE(target_->run(ids[1]).state, RunState::Interrupted);
        // Not a store into itself, and an exchange file is no store.
        QVERIFY_THROWS_EXCEPTION(ExchangeError, import_runs_from_store(*target_, target_->path()));
        QCOMPARE(target_->list_runs().size(), std::size_t(2));
        const QString exchange = dir_->filePath("runs.scalelab.json");
        QString error;
        QVERIFY(save_exchange(*source_, {diverged_}, exchange, &error));
        QVERIFY(!is_sqlite_file(exchange));
        QVERIFY(!is_sqlite_file(dir_->filePath("missing.sqlite")));
    }

    void exported_rows_are_one_per_line() {
        const QByteArray file = export_runs(*source_, {diverged_});
        const QList<QByteArray> lines = file.split('\n');
        const qsizetype row_lines =
            std::count_if(lines.begin(), lines.end(), [](const QByteArray& line) {
                return line.trimmed().startsWith('[') && line.trimmed().size() > 1;
            });
        QCOMPARE(row_lines, qsizetype(source_->metrics(diverged_).size()));
        const QJsonObject top = as_object(file);
        QCOMPARE(top["format"].toString(), QString(exchange_format));
        QCOMPARE(top["version"].toInt(), exchange_version);
    }

    void importing_twice_gives_new_ids() {
        const QByteArray file = export_runs(*source_, {diverged_});
        const std::vector<std::int64_t> first = import_runs(*source_, file);
        const std::vector<std::int64_t> second = import_runs(*source_, file);
        QCOMPARE(first.size(), std::size_t(1));
        QCOMPARE(second.size(), std::size_t(1));
        QVERIFY(first[0] != diverged_ && first[0] != queued_);
        QVERIFY(second[0] != first[0] && second[0] != diverged_ && second[0] != queued_);
        QCOMPARE(source_->list_runs().size(), std::size_t(4));
        compare_runs(source_->run(second[0]), source_->run(diverged_));
        compare_rows(source_->metrics(second[0]), source_->metrics(diverged_));
    }

    // A group comes in under a new id, its runs together, apart from the runs of the same group
    // imported before; a run that stood alone stays alone.
    void groups_come_in_under_new_ids() {
        RunSpec spec = testing::fixture_spec(2);
        const std::int64_t seed0 = source_->create_run(spec, "seed 0", {}, "g-1");
        spec.seed = 1;
        const std::int64_t seed1 = source_->create_run(spec, "seed 1", {}, "g-1");
        const QByteArray file = export_runs(*source_, {seed0, queued_, seed1});
        QCOMPARE(as_object(file)["runs"].toArray()[0].toObject()["group"].toString(), "g-1");
        const std::vector<std::int64_t> first = import_runs(*target_, file);
        const std::vector<std::int64_t> second = import_runs(*target_, file);
        const QString group = target_->run(first[0]).group;
        QVERIFY(!group.isEmpty() && group != "g-1");
        QCOMPARE(target_->run(first[2]).group, group);
        QVERIFY(target_->run(first[1]).group.isEmpty());
        QCOMPARE(target_->run(second[2]).group, target_->run(second[0]).group);
        QVERIFY(target_->run(second[0]).group != group);
    }

    // A tampered file whose group's runs differ in more than the seed is refused, naming the
    // run and the field.
    void a_group_of_different_experiments_is_refused() {
        RunSpec spec = testing::fixture_spec(2);
        const std::int64_t seed0 = source_->create_run(spec, "seed 0", {}, "g-1");
        spec.seed = 1;
        const std::int64_t seed1 = source_->create_run(spec, "seed 1", {}, "g-1");
        QJsonObject file = as_object(export_runs(*source_, {seed0, seed1}));
        QJsonArray runs = file["runs"].toArray();
        QJsonObject second = runs[1].toObject();
        set_in(second, "config", "batch", 256);
        runs[1] = second;
        file["runs"] = runs;
        expect_refused(as_document(file), {"run 2 (\"seed 1\"), group", "field 'batch' differs",
                                           "only in their seed"});
    }

    void broken_run_refuses_the_whole_file_data() {
        QTest::addColumn<int>("index");
        for (std::size_t i = 0; i < broken_runs().size(); ++i)
            QTest::newRow(broken_runs()[i].name) << int(i);
    }
    void broken_run_refuses_the_whole_file() {
        QFETCH(int, index);
        const BrokenRun& broken = broken_runs()[std::size_t(index)];
        // The first run is sound and the second broken: neither may be added.
        QJsonObject file = as_object(export_runs(*source_, {diverged_, diverged_}));
        QJsonArray runs = file["runs"].toArray();
        QJsonObject second = runs[1].toObject();
        broken.breaks(second);
        runs[1] = second;
        file["runs"] = runs;
        expect_refused(as_document(file), QStringList{"run 2"} + broken.reason);
    }

    void malformed_file_is_refused_data() {
        QTest::addColumn<QByteArray>("document");
        QTest::addColumn<QStringList>("reason");
        QTest::newRow("cut short") << minimal_file.left(minimal_file.size() / 2)
                                   << QStringList{"not valid JSON", "line", "column"};
        QTest::newRow("syntax error on line 3")
            << QByteArray("{\n  \"format\": \"scalelab-runs\",\n  \"version\" 1\n}")
            << QStringList{"line 3, column"};
        QTest::newRow("an array") << QByteArray("[1, 2]")
                                  << QStringList{"not a ScaleLab runs file"};
        QTest::newRow("another format")
            << QByteArray(R"({"format": "tensorboard", "version": 1, "runs": []})")
            << QStringList{"not a ScaleLab runs file"};
        QTest::newRow("newer version")
            << QStringLiteral(R"({"format": "scalelab-runs", "version": %1, "runs": []})")
                   .arg(exchange_version + 1)
                   .toUtf8()
            << QStringList{QStringLiteral("version %1").arg(exchange_version + 1),
                           "newer ScaleLab"};
        QTest::newRow("runs missing") << QByteArray(R"({"format": "scalelab-runs", "version": 1})")
                                      << QStringList{"runs: missing"};
        QTest::newRow("run not an object")
            << QByteArray(R"({"format": "scalelab-runs", "version": 1, "runs": [7]})")
            << QStringList{"run 1: must be an object"};
        QTest::newRow("a config key given twice")
            << QByteArray(R"({"format": "scalelab-runs", "version": 1, "runs": [{"name": "a",
                "state": "finished", "config": {"batch": 8, "batch": 16}}]})")
            << QStringList{"run 1 (\"a\"), config", "the key \"batch\" is given twice"};
        QTest::newRow("a curve given twice")
            << QByteArray(R"({"format": "scalelab-runs", "version": 1, "runs": [{"name": "a",
                "state": "finished", "config": {}, "metrics": {"lr": [], "lr": []}}]})")
            << QStringList{"run 1 (\"a\"), metrics", "the key \"lr\" is given twice"};
        QTest::newRow("runs before the format")
            << QByteArray(R"({"runs": [], "format": "scalelab-runs", "version": 1})")
            << QStringList{"not a ScaleLab runs file", "first"};
        QTest::newRow("nested 40 deep")
            << (QByteArray(R"({"format": "scalelab-runs", "version": 1, "runs": [{"name": "a",
                "config": {"x": )") +
                QByteArray(40, '[') + QByteArray(40, ']') + "}}]}")
            << QStringList{"run 1 (\"a\"), config.x", "nested more than 32 levels"};
    }
    void malformed_file_is_refused() {
        QFETCH(QByteArray, document);
        QFETCH(QStringList, reason);
        expect_refused(document, reason);
    }

    void minimal_file_imports_with_defaults() {
        const std::vector<std::int64_t> ids = import_runs(*target_, minimal_file);
        QCOMPARE(ids.size(), std::size_t(1));
        const StoredRun run = target_->run(ids[0]);
        QCOMPARE(run.name, QString("by hand"));
        QCOMPARE(run.state, RunState::Finished);
        QCOMPARE(run.spec.batch, 8);
        QCOMPARE(run.spec.lr, RunSpec{}.lr);
        QVERIFY(!run.started);
        QVERIFY(run.tags.isEmpty());
        const std::vector<MetricRow> rows = target_->metrics(ids[0]);
        QCOMPARE(rows.size(), std::size_t(2));
        QCOMPARE(rows[0].wall_time, 0.25);
        QCOMPARE(rows[0].value, 2.5);
        QVERIFY(std::isnan(rows[1].value));
    }

    // A file written by hand may give a run's fields in any order, its metrics first.
    void fields_may_come_in_any_order() {
        const QByteArray file = R"({"format": "scalelab-runs", "runs": [
            {"metrics": {"train_loss": [[1, 1, 0.25, 2.5]]}, "config": {"batch": 8},
             "state": "finished", "name": "metrics first"}], "version": 1})";
        const std::vector<std::int64_t> ids = import_runs(*target_, file);
        QCOMPARE(ids.size(), std::size_t(1));
        QCOMPARE(target_->run(ids[0]).name, QStringLiteral("metrics first"));
        QCOMPARE(target_->metrics(ids[0]).size(), std::size_t(1));
    }

    // A value of megabytes is named in a message, not echoed whole.
    void a_huge_value_is_cut_in_the_message() {
        const QByteArray huge(4 << 20, 'x');
        for (const QByteArray& file :
             {R"({"format": "scalelab-runs", "version": 1, "runs": [{"name": ")" + huge +
                  R"(", "state": "finished", "config": {}}]})",
              R"({"format": "scalelab-runs", "version": 1, "runs": [{")" + huge + R"(": 1}]})",
              R"({"format": "scalelab-runs", "version": 1, "runs": [{"name": "a", "state": ")" +
                  huge + R"(", "config": {}}]})"}) {
            try {
                import_runs(*target_, file);
                QFAIL("a file with a 4 MB value was imported");
            } catch (const ExchangeError& error) {
                QVERIFY2(std::strlen(error.what()) < 1000, error.what());
                QVERIFY2(QByteArray(error.what()).contains("4194304"), error.what());
            }
        }
    }

    void file_without_runs_imports_nothing() {
        const std::vector<std::int64_t> ids = import_runs(*target_, export_runs(*source_, {}));
        QVERIFY(ids.empty());
        QVERIFY(target_->list_runs().empty());
    }

    void unknown_id_is_not_exported() {
        try {
            export_runs(*source_, {diverged_, 999});
            QFAIL("exported a run that is not in the store");
        } catch (const StoreError& error) {
            QCOMPARE(error.kind(), StoreError::Kind::NotFound);
        }
        QString error;
        QVERIFY_THROWS_EXCEPTION(
            StoreError, save_exchange(*source_, {999}, dir_->filePath("x.scalelab.json"), &error));
        QVERIFY(!QFile::exists(dir_->filePath("x.scalelab.json")));
    }

    void unwritable_file_names_itself() {
        QString error;
        const QString path = dir_->filePath("no/such/folder/runs.scalelab.json");
        QVERIFY(!save_exchange(*source_, {diverged_}, path, &error));
        QVERIFY2(error.contains(path), qPrintable(error));
        QVERIFY(!save_stored_metrics_csv(*source_, {diverged_}, path, &error));
        QVERIFY2(error.contains(path), qPrintable(error));
    }

    void metrics_csv_has_every_row() {
        const QString path = dir_->filePath("metrics.csv");
        QString error;
        QVERIFY2(save_stored_metrics_csv(*source_, {diverged_}, path, &error), qPrintable(error));
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly | QIODevice::Text));
        const QStringList lines = QString::fromUtf8(file.readAll()).split('\n', Qt::SkipEmptyParts);
        const std::vector<MetricRow> rows = source_->metrics(diverged_);
        QCOMPARE(lines.size(), qsizetype(rows.size()) + 1);
        QVERIFY(lines[0].startsWith("run,run_id,group,step"));
        // The name holds a comma and quotes: quoted, its quotes doubled; then the store's id and
        // the group (none).
        const QString first_row = lines[1];
        QVERIFY2(first_row.startsWith(
                     QStringLiteral("\"lars, \"\"2\"\" dev × 32\",%1,,1,1,").arg(diverged_)),
                 qPrintable(first_row));
    }

  private:
    // `document` is refused with a message saying all of `reason`, and the store is unchanged.
    void expect_refused(const QByteArray& document, const QStringList& reason) {
        const std::int64_t before = target_->change_counter();
        try {
            import_runs(*target_, document);
            QFAIL("a broken file was imported");
        } catch (const ExchangeError& error) {
            const QString message = QString::fromUtf8(error.what());
            for (const QString& part : reason)
                QVERIFY2(message.contains(part), qPrintable(message + " -- lacks: " + part));
        }
        QVERIFY(target_->list_runs().empty());
        QCOMPARE(target_->change_counter(), before);
    }

    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<RunStore> source_, target_;
    std::int64_t diverged_ = 0, queued_ = 0;
};

QTEST_GUILESS_MAIN(TestRunExchange)
#include "test_run_exchange.moc"
