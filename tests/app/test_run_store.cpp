#include <QDateTime>
#include <QProcess>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <atomic>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "run_fixtures.h"
#include "run_spec_json.h"
#include "run_store.h"
#include "sqlite_file.h"
#include "store_schema.h"

using scalelab::EpochMetrics;
using scalelab::Metric;
using scalelab::MetricPoint;
using scalelab::MetricRow;
using scalelab::RunInfo;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::RunStore;
using scalelab::RunWithMetrics;
using scalelab::StoredRun;
using scalelab::StoreError;
using scalelab::testing::file_bytes;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;
using scalelab::testing::SqliteFile;

namespace {

bool same(double a, double b) {
    return (std::isnan(a) && std::isnan(b)) || a == b;
}

// A finished two-epoch run with every curve, a NaN loss (as a diverging run reports) and
// targets reached, built without training.
RunRecord sample_run(const QString& name, int devices, RunState state = RunState::Finished) {
    RunRecord run = fixture_run(fixture_spec(devices, 0.05 * devices), name, 900.0 * devices,
                                {0.86, 0.91}, state, 25);
    for (const MetricPoint& point : run.curve(Metric::TrainLoss))
        run.curve(Metric::NoiseScale)
            .push_back(MetricPoint{point.step, point.epoch, point.samples, point.seconds,
                                   100.0 + point.step});
    run.curve(Metric::TrainLoss)[7].value = std::numeric_limits<double>::quiet_NaN();
    for (std::size_t i = 0; i < run.epochs.size(); ++i)
        run.epochs[i].val_loss = run.curve(Metric::ValLoss)[i].value;
    run.info.warnings = {"more devices than cores: throughput cannot scale"};
    if (state == RunState::Diverged) {
        run.message = QStringLiteral("the loss became NaN at step 8");
        // Measured, and disturbed by other programs from the second epoch on.
        run.epochs[0].other_programs_share = 0.02;
        run.epochs[1].other_programs_share = 0.45;
    }
    return run;
}

std::vector<MetricRow> rows_of_epoch(const RunRecord& run, int epoch) {
    std::vector<MetricRow> rows;
    for (const Metric metric : scalelab::all_metrics)
        for (const MetricPoint& point : run.curve(metric))
            if (point.epoch == epoch)
                rows.push_back(MetricRow{.step = point.step,
                                         .epoch = point.epoch,
                                         .wall_time = point.seconds,
                                         .metric = metric,
                                         .value = point.value});
    return rows;
}

// Writes a run as the recorder does: created, started, one batch of rows per epoch, ended.
std::int64_t write_run(RunStore& store, const RunRecord& run, const QStringList& tags = {}) {
    const std::int64_t id = store.create_run(run.spec, run.name, tags);
    store.mark_started(id, run.info);
    for (const EpochMetrics& epoch : run.epochs)
        store.append_metrics(id, rows_of_epoch(run, epoch.epoch), {epoch});
    store.mark_ended(id, run.state, run.message);
    return id;
}

void compare_curves(const RunRecord& loaded, const RunRecord& expected) {
    for (const Metric metric : scalelab::all_metrics) {
        const auto& got = loaded.curve(metric);
        const auto& want = expected.curve(metric);
        QCOMPARE(got.size(), want.size());
        for (std::size_t i = 0; i < got.size(); ++i) {
            QCOMPARE(got[i].step, want[i].step);
            QCOMPARE(got[i].epoch, want[i].epoch);
            QCOMPARE(got[i].samples, want[i].samples);
            QCOMPARE(got[i].seconds, want[i].seconds);
            QVERIFY2(same(got[i].value, want[i].value),
                     qPrintable(QStringLiteral("%1 point %2: %3 instead of %4")
                                    .arg(QString::fromLatin1(scalelab::metric_name(metric).data()))
                                    .arg(i)
                                    .arg(got[i].value)
                                    .arg(want[i].value)));
        }
    }
}

void compare_targets(const std::vector<scalelab::TargetReached>& got,
                     const std::vector<scalelab::TargetReached>& want) {
    QCOMPARE(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
        QCOMPARE(got[i].target, want[i].target);
        QCOMPARE(got[i].seconds, want[i].seconds);
        QCOMPARE(got[i].step, want[i].step);
        QCOMPARE(got[i].epoch, want[i].epoch);
        QCOMPARE(got[i].images, want[i].images);
    }
}

void compare_info(const RunInfo& got, const RunInfo& want) {
    QCOMPARE(got.devices, want.devices);
    QCOMPARE(got.threads_per_device, want.threads_per_device);
    QCOMPARE(got.cores, want.cores);
    QCOMPARE(got.global_batch, want.global_batch);
    QCOMPARE(got.steps_per_epoch, want.steps_per_epoch);
    QCOMPARE(got.parameters, want.parameters);
    QCOMPARE(got.warnings, want.warnings);
}

void compare_stored(const StoredRun& got, const StoredRun& want) {
    QCOMPARE(got.name, want.name);
    QCOMPARE(got.tags, want.tags);
    QCOMPARE(scalelab::run_spec_to_json(got.spec), scalelab::run_spec_to_json(want.spec));
    QCOMPARE(got.state, want.state);
    QCOMPARE(got.message, want.message);
    QCOMPARE(got.started, want.started);
    compare_info(got.info, want.info);
    QCOMPARE(got.machine, want.machine);
    QCOMPARE(got.created, want.created);
    QCOMPARE(got.started_at, want.started_at);
    QCOMPARE(got.ended_at, want.ended_at);
    QCOMPARE(got.steps, want.steps);
    QCOMPARE(got.epochs, want.epochs);
    QCOMPARE(got.train_seconds, want.train_seconds);
    QCOMPARE(got.best_val_accuracy, want.best_val_accuracy);
    QCOMPARE(got.mean_images_per_s, want.mean_images_per_s);
    compare_targets(got.targets, want.targets);
}

// The error RunStore::open(path) throws; nothing when it opens.
std::optional<StoreError> open_error(const QString& path) {
    try {
        RunStore::open(path);
    } catch (const StoreError& error) {
        return error;
    }
    return std::nullopt;
}

// A pid that no process has: a child that has exited and been reaped.
qint64 dead_pid() {
    QProcess child;
    child.start(QStringLiteral("true"), {});
    child.waitForStarted();
    const qint64 pid = child.processId();
    child.waitForFinished();
    return pid;
}

}  // namespace

class TestRunStore : public QObject {
    Q_OBJECT

  private slots:
    void init() { QVERIFY(dir_.isValid()); }

    void roundTripKeepsRunsAndCurves() {
        const QString path = dir_.filePath(QStringLiteral("round_trip.sqlite"));
        const RunRecord first = sample_run(QStringLiteral("cnn 1 device"), 1);
        const RunRecord second = sample_run(QStringLiteral("cnn 4 devices"), 4, RunState::Diverged);
        std::int64_t first_id = 0;
        std::int64_t second_id = 0;
        const QDateTime before = QDateTime::currentDateTimeUtc().addSecs(-1);
        {
            auto store = RunStore::open(path);
            first_id = write_run(*store, first, {QStringLiteral("baseline")});
            second_id =
                write_run(*store, second, {QStringLiteral("scaling"), QStringLiteral("lr")});
        }
        const QDateTime after = QDateTime::currentDateTimeUtc().addSecs(1);

        auto store = RunStore::open(path);
        const std::vector<StoredRun> runs = store->list_runs();
        QCOMPARE(runs.size(), std::size_t{2});
        QCOMPARE(runs[0].id, first_id);
        QCOMPARE(runs[1].id, second_id);
        QCOMPARE(runs[1].tags, (QStringList{QStringLiteral("scaling"), QStringLiteral("lr")}));
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const RunRecord& written = i == 0 ? first : second;
            const StoredRun& run = runs[i];
            QCOMPARE(run.name, written.name);
            QCOMPARE(scalelab::run_spec_to_json(run.spec),
                     scalelab::run_spec_to_json(written.spec));
            QCOMPARE(run.state, written.state);
            QCOMPARE(run.message, written.message);
            QVERIFY(run.started);
            compare_info(run.info, written.info);
            QVERIFY(!run.machine.isEmpty());
            for (const QDateTime& time : {run.created, run.started_at, run.ended_at})
                QVERIFY(time.isValid() && time >= before && time <= after);
            QCOMPARE(run.steps, written.step);
            QCOMPARE(run.epochs, written.epoch);
            QCOMPARE(run.train_seconds, written.train_seconds);
            QCOMPARE(run.best_val_accuracy, written.best_val_accuracy());
            QCOMPARE(run.mean_images_per_s, written.mean_images_per_s());
            QCOMPARE(run.other_programs_share, written.other_programs_share());
            compare_targets(run.targets, written.targets);
            compare_stored(store->run(run.id), run);
        }

        const RunRecord loaded = store->load_record(second_id);
        QCOMPARE(std::int64_t{loaded.id}, second_id);
        QCOMPARE(loaded.name, second.name);
        QCOMPARE(loaded.state, RunState::Diverged);
        QCOMPARE(loaded.message, second.message);
        QCOMPARE(loaded.step, second.step);
        QCOMPARE(loaded.epoch, second.epoch);
        QCOMPARE(loaded.train_seconds, second.train_seconds);
        QCOMPARE(loaded.ended, runs[1].ended_at);
        compare_curves(loaded, second);
        compare_targets(loaded.targets, second.targets);
        QCOMPARE(loaded.epochs.size(), second.epochs.size());
        double previous_seconds = 0;
        for (std::size_t i = 0; i < loaded.epochs.size(); ++i) {
            const EpochMetrics& got = loaded.epochs[i];
            const EpochMetrics& want = second.epochs[i];
            QCOMPARE(got.epoch, want.epoch);
            QCOMPARE(got.step, want.step);
            QCOMPARE(got.val_loss, want.val_loss);
            QCOMPARE(got.val_accuracy, want.val_accuracy);
            const double seconds = second.curve(Metric::ValAccuracy)[i].seconds;
            QCOMPARE(got.epoch_seconds, seconds - previous_seconds);
            previous_seconds = seconds;
            compare_targets(got.reached, want.reached);
        }
        QCOMPARE(loaded.epochs.back().steady_images_per_s,
                 second.epochs.back().steady_images_per_s);
        QCOMPARE(runs[0].other_programs_share, std::nullopt);  // never measured
        QCOMPARE(loaded.other_programs_share().value(), 0.45);
        QVERIFY(loaded.disturbed());
        QCOMPARE(loaded.time_to_target()->seconds, second.time_to_target()->seconds);
    }

    void listsRunsInTheOrderTheyWereAdded() {
        auto store = RunStore::open(dir_.filePath(QStringLiteral("order.sqlite")));
        std::vector<std::int64_t> ids;
        for (const char* name : {"c", "a", "b"})
            ids.push_back(store->create_run(fixture_spec(1), QString::fromLatin1(name)));
        const std::int64_t unnamed = store->create_run(fixture_spec(2), QString());
        const std::vector<StoredRun> runs = store->list_runs();
        QCOMPARE(runs.size(), std::size_t{4});
        for (std::size_t i = 0; i < ids.size(); ++i)
            QCOMPARE(runs[i].id, ids[i]);
        QCOMPARE(runs[0].name, QStringLiteral("c"));
        QCOMPARE(runs[3].name, QStringLiteral("run %1").arg(unnamed));
        QCOMPARE(runs[3].state, RunState::Queued);
        QVERIFY(!runs[3].started);
        QCOMPARE(runs[3].spec.devices, 2);
    }

    void renameTagAndDeleteWithTheirMetrics() {
        const QString path = dir_.filePath(QStringLiteral("edit.sqlite"));
        auto store = RunStore::open(path);
        const std::int64_t kept = write_run(*store, sample_run(QStringLiteral("kept"), 1));
        const std::int64_t gone = write_run(*store, sample_run(QStringLiteral("gone"), 2));
        store->rename(kept, QStringLiteral("baseline, 1 device"));
        store->set_tags(kept, {QStringLiteral("week 1"), QStringLiteral("baseline")});
        QVERIFY_THROWS_EXCEPTION(StoreError, store->rename(kept, QStringLiteral("  ")));

        const SqliteFile file(path);
        const QString count = QStringLiteral("SELECT count(*) FROM metrics WHERE run_id = %1");
        const qint64 gone_rows = file.scalar(count.arg(gone)).toLongLong();
        QVERIFY(gone_rows > 0);
        store->delete_runs({gone});
        QCOMPARE(file.scalar(count.arg(gone)).toLongLong(), qint64{0});
        QVERIFY(file.scalar(count.arg(kept)).toLongLong() > 0);
        try {
            store->run(gone);
            QFAIL("a deleted run was found");
        } catch (const StoreError& error) {
            QCOMPARE(error.kind(), StoreError::Kind::NotFound);
        }
        // One id that is not there: nothing is deleted.
        QVERIFY_THROWS_EXCEPTION(StoreError, store->delete_runs({kept, gone}));
        store.reset();

        store = RunStore::open(path);
        const std::vector<StoredRun> runs = store->list_runs();
        QCOMPARE(runs.size(), std::size_t{1});
        QCOMPARE(runs[0].name, QStringLiteral("baseline, 1 device"));
        QCOMPARE(runs[0].tags, (QStringList{QStringLiteral("week 1"), QStringLiteral("baseline")}));
    }

    void insertRunKeepsEveryField() {
        auto source = RunStore::open(dir_.filePath(QStringLiteral("source.sqlite")));
        const std::int64_t source_id =
            write_run(*source, sample_run(QStringLiteral("exported"), 2), {QStringLiteral("x")});
        const StoredRun exported = source->run(source_id);
        const std::vector<MetricRow> rows = source->metrics(source_id);

        auto target = RunStore::open(dir_.filePath(QStringLiteral("target.sqlite")));
        target->create_run(fixture_spec(1), QStringLiteral("already there"));
        const std::int64_t id = target->insert_run(exported, rows);
        QVERIFY(id != 0);
        compare_stored(target->run(id), exported);
        const std::vector<MetricRow> copied = target->metrics(id);
        QCOMPARE(copied.size(), rows.size());
        for (std::size_t i = 0; i < rows.size(); ++i) {
            QCOMPARE(copied[i].step, rows[i].step);
            QCOMPARE(copied[i].metric, rows[i].metric);
            QCOMPARE(copied[i].epoch, rows[i].epoch);
            QCOMPARE(copied[i].wall_time, rows[i].wall_time);
            QVERIFY(same(copied[i].value, rows[i].value));
        }
        compare_curves(target->load_record(id), source->load_record(source_id));

        // All or nothing: a row SQLite refuses (no wall time) keeps the first run out as well.
        std::vector<MetricRow> bad = rows;
        bad.back().wall_time = std::numeric_limits<double>::quiet_NaN();
        const std::size_t count = target->list_runs().size();
        QVERIFY_THROWS_EXCEPTION(StoreError, target->insert_runs({RunWithMetrics{exported, rows},
                                                                  RunWithMetrics{exported, bad}}));
        QCOMPARE(target->list_runs().size(), count);
        const std::vector<std::int64_t> ids =
            target->insert_runs({RunWithMetrics{exported, rows}, RunWithMetrics{exported, {}}});
        QCOMPARE(ids.size(), std::size_t{2});
        QVERIFY(ids[0] < ids[1]);
        QCOMPARE(target->list_runs().size(), count + 2);
    }

    void metricsAfterAStepComeInStepOrder() {
        auto store = RunStore::open(dir_.filePath(QStringLiteral("after.sqlite")));
        const RunRecord run = sample_run(QStringLiteral("r"), 1);
        const std::int64_t id = write_run(*store, run);
        const std::vector<MetricRow> rows = store->metrics(id, 20);
        // Steps 21 to 50: four training curves and the noise scale, and two epoch ends at 25, 50.
        QCOMPARE(rows.size(), std::size_t{30 * 5 + 2 * 2});
        for (std::size_t i = 1; i < rows.size(); ++i) {
            QVERIFY(rows[i - 1].step < rows[i].step ||
                    (rows[i - 1].step == rows[i].step && rows[i - 1].metric < rows[i].metric));
        }
        QCOMPARE(rows.front().step, std::int64_t{21});
        QCOMPARE(rows.front().metric, Metric::TrainLoss);
        QCOMPARE(rows.back().metric, Metric::ValAccuracy);
        QCOMPARE(rows.back().value, 0.91);
    }

    void changeCounterSeesCommitsOfOtherConnections() {
        const QString path = dir_.filePath(QStringLiteral("counter.sqlite"));
        auto reader = RunStore::open(path);
        auto writer = RunStore::open(path);
        const std::int64_t before = reader->change_counter();
        QCOMPARE(reader->change_counter(), before);
        const std::int64_t id = writer->create_run(fixture_spec(1), QStringLiteral("new"));
        const std::int64_t after_create = reader->change_counter();
        QVERIFY(after_create != before);
        writer->append_metrics(id, {MetricRow{.step = 1, .epoch = 1, .wall_time = 0.1}});
        QVERIFY(reader->change_counter() != after_create);
        const std::int64_t own = reader->change_counter();
        reader->rename(id, QStringLiteral("renamed"));
        QVERIFY(reader->change_counter() != own);
    }

    void randomBytesAreNotAStoreAndStayAsTheyWere() {
        const QString path = dir_.filePath(QStringLiteral("random.sqlite"));
        QByteArray bytes(64 * 1024, Qt::Uninitialized);
        QRandomGenerator generator(7);
        for (char& byte : bytes)
            byte = char(generator.bounded(256));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bytes);
        file.close();

        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
        QCOMPARE(QString::fromUtf8(error->what()),
                 QStringLiteral("%1 is not a ScaleLab run store (not an SQLite database): open "
                                "another file or start a new store")
                     .arg(path));
        QCOMPARE(file_bytes(path), bytes);
    }

    // The rules of run_labels.h, as for --name, --tag and an imported run.
    void namesAndTagsOutsideTheRulesAreRefused() {
        auto store = RunStore::open(dir_.filePath(QStringLiteral("labels.sqlite")));
        const std::int64_t id = store->create_run(RunSpec{}, QStringLiteral("kept"));
        QVERIFY_THROWS_EXCEPTION(StoreError, store->rename(id, QString(201, QLatin1Char('n'))));
        QVERIFY_THROWS_EXCEPTION(StoreError,
                                 store->set_tags(id, {QStringLiteral("ok"), QString()}));
        QVERIFY_THROWS_EXCEPTION(StoreError, store->set_tags(id, {QString(65, QLatin1Char('t'))}));
        store->rename(id, QString(200, QLatin1Char('n')));
        QCOMPARE(store->run(id).name.size(), qsizetype(200));
    }

    void anotherProgramsDatabaseIsLeftAlone() {
        const QString path = dir_.filePath(QStringLiteral("other.sqlite"));
        {
            const SqliteFile other(path);
            other.exec(QStringLiteral("CREATE TABLE contacts (name TEXT)"));
        }
        const QByteArray bytes = file_bytes(path);
        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
        QVERIFY(
            QString::fromUtf8(error->what()).contains(QStringLiteral("not a ScaleLab run store")));
        QCOMPARE(file_bytes(path), bytes);
    }

    void truncatedStoreIsCorruptAndStaysAsItWas() {
        const QString path = dir_.filePath(QStringLiteral("truncated.sqlite"));
        {
            auto store = RunStore::open(path);
            for (int i = 0; i < 4; ++i)
                write_run(*store, sample_run(QStringLiteral("run %1").arg(i), 1 + i));
        }
        QVERIFY(!QFile::exists(path + QStringLiteral("-wal")));  // checkpointed at close
        const qint64 size = QFileInfo(path).size();
        QVERIFY(size > 8 * 4096);
        QVERIFY(QFile::resize(path, size / 2));
        const QByteArray bytes = file_bytes(path);

        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
        QVERIFY2(QString::fromUtf8(error->what()).contains(QStringLiteral("is damaged")),
                 error->what());
        QCOMPARE(file_bytes(path), bytes);
    }

    void newerSchemaIsRefusedWithoutWriting() {
        const QString path = dir_.filePath(QStringLiteral("newer.sqlite"));
        {
            auto store = RunStore::open(path);
            write_run(*store, sample_run(QStringLiteral("from the future"), 1));
        }
        {
            const SqliteFile file(path);
            file.exec(QStringLiteral("PRAGMA user_version = 99"));
        }
        const QByteArray bytes = file_bytes(path);
        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::NewerSchema);
        QCOMPARE(QString::fromUtf8(error->what()),
                 QStringLiteral("%1 was written by a newer ScaleLab (schema 99, this build reads "
                                "up to %2): open it with that version")
                     .arg(path)
                     .arg(RunStore::schema_version));
        QCOMPARE(file_bytes(path), bytes);
    }

    // A user_version that no ScaleLab writes, or one that does not match the tables, is a
    // damaged store (exit 2 from the CLI), refused without writing; not a disk to check.
    void aWrongSchemaVersionIsDamageNotADiskProblem() {
        for (const int version : {-1, 1}) {
            const QString path = dir_.filePath(QStringLiteral("relabelled%1.sqlite").arg(version));
            {
                auto store = RunStore::open(path);
                write_run(*store, sample_run(QStringLiteral("relabelled"), 1));
            }
            {
                const SqliteFile file(path);
                file.exec(QStringLiteral("PRAGMA user_version = %1").arg(version));
            }
            const QByteArray bytes = file_bytes(path);
            const std::optional<StoreError> error = open_error(path);
            QVERIFY(error);
            QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
            QVERIFY2(QString::fromUtf8(error->what()).contains("damaged or edited"), error->what());
            QCOMPARE(file_bytes(path), bytes);
        }
    }

    // A store whose tables were edited so that a run's id is no longer its key would list runs
    // that no query then finds: refused as damaged or edited, left as it is.
    void editedKeysAreDamageNotAStore() {
        const QString path = dir_.filePath(QStringLiteral("edited.sqlite"));
        {
            const SqliteFile file(path);
            file.exec(QStringLiteral("CREATE TABLE runs (id TEXT PRIMARY KEY, name TEXT)"));
            file.exec(
                QStringLiteral("CREATE TABLE metrics (run_id INTEGER, name TEXT, step "
                               "INTEGER, PRIMARY KEY (run_id, name, step))"));
            file.exec(QStringLiteral("PRAGMA application_id = %1")
                          .arg(scalelab::store_schema::application_id));
            file.exec(QStringLiteral("PRAGMA user_version = %1").arg(RunStore::schema_version));
        }
        const QByteArray bytes = file_bytes(path);
        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
        QVERIFY2(
            QString::fromUtf8(error->what())
                .contains("its table runs does not match it (column 1: 'id TEXT (key 1)', where "
                          "that schema has 'id INTEGER (key 1)')"),
            error->what());
        QCOMPARE(file_bytes(path), bytes);
    }

    // An older store whose column was renamed (the fuzzer's find: one damaged byte in the
    // schema's text, which quick_check does not read) would be upgraded and then fail to list:
    // refused before anything is written, naming the column.
    void anOlderStoreWithARenamedColumnIsRefusedNotUpgraded() {
        const QString path = dir_.filePath(QStringLiteral("renamed.sqlite"));
        {
            const SqliteFile file(path);
            QSqlDatabase db = file.database();
            const QSqlError error = scalelab::store_schema::migrate(db, 0, 3);
            QVERIFY2(error.type() == QSqlError::NoError, qPrintable(error.text()));
            file.exec(QStringLiteral("ALTER TABLE runs RENAME COLUMN state TO stage"));
        }
        const QByteArray bytes = file_bytes(path);
        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
        QVERIFY2(QString::fromUtf8(error->what())
                     .contains("says it has schema 3, but its table runs does not match it "
                               "(column 4: 'stage TEXT NOT NULL', where that schema has 'state "
                               "TEXT NOT NULL')"),
                 error->what());
        QCOMPARE(file_bytes(path), bytes);
        QCOMPARE(SqliteFile(path).scalar(QStringLiteral("PRAGMA user_version")).toInt(), 3);
    }

    void pathsThatCannotHoldAStoreAreUnreadable() {
        const QString plain_file = dir_.filePath(QStringLiteral("plain.txt"));
        QFile file(plain_file);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("not a folder");
        file.close();
        // Tests run as root, which may read and write anything: these fail for every user.
        for (const QString& path :
             {dir_.path(), plain_file + QStringLiteral("/runs.sqlite"), QString()}) {
            const std::optional<StoreError> error = open_error(path);
            QVERIFY2(error, qPrintable(path));
            QCOMPARE(error->kind(), StoreError::Kind::Unreadable);
        }
        QVERIFY(QString::fromUtf8(open_error(dir_.path())->what())
                    .contains(QStringLiteral("is a folder")));
        QCOMPARE(file_bytes(plain_file), QByteArray("not a folder"));
    }

    void migrationFromVersionOneKeepsEveryRow() {
        const QString path = dir_.filePath(QStringLiteral("version1.sqlite"));
        const RunRecord finished = sample_run(QStringLiteral("old finished"), 2);
        const QString config =
            QString::fromUtf8(QJsonDocument(scalelab::run_spec_to_json(finished.spec))
                                  .toJson(QJsonDocument::Compact));
        {
            const SqliteFile file(path);
            QSqlDatabase db = file.database();
            QVERIFY(db.transaction());
            const QSqlError error = scalelab::store_schema::migrate(db, 0, 1);
            QVERIFY2(error.type() == QSqlError::NoError, qPrintable(error.text()));
            QSqlQuery insert(db);
            QVERIFY(insert.prepare(QStringLiteral(
                "INSERT INTO runs (id, name, config_json, state, message, info_json, machine, "
                "created, started_at, ended_at, steps, epochs, train_seconds, best_val_accuracy, "
                "mean_images_per_s, targets_json) VALUES (?, ?, ?, ?, '', ?, 'old host', "
                "'2024-05-01T10:00:00.000Z', '2024-05-01T10:00:01.000Z', ?, ?, ?, ?, ?, ?, "
                "'[]')")));
            const auto add_run = [&](int id, const QString& name, const QString& state,
                                     const QVariant& ended) {
                insert.bindValue(0, id);
                insert.bindValue(1, name);
                insert.bindValue(2, config);
                insert.bindValue(3, state);
                insert.bindValue(4, QStringLiteral("{\"devices\":2,\"global_batch\":256,"
                                                   "\"steps_per_epoch\":25}"));
                insert.bindValue(5, ended);
                insert.bindValue(6, qint64(finished.step));
                insert.bindValue(7, finished.epoch);
                insert.bindValue(8, finished.train_seconds);
                insert.bindValue(9, *finished.best_val_accuracy());
                insert.bindValue(10, *finished.mean_images_per_s());
                QVERIFY2(insert.exec(), qPrintable(insert.lastError().text()));
            };
            add_run(3, finished.name, QStringLiteral("finished"),
                    QStringLiteral("2024-05-01T10:05:00.000Z"));
            add_run(8, QStringLiteral("old running"), QStringLiteral("running"), QVariant());
            QSqlQuery metric(db);
            QVERIFY(
                metric.prepare(QStringLiteral("INSERT INTO metrics VALUES (?, ?, ?, ?, ?, ?)")));
            for (const Metric m : scalelab::all_metrics)
                for (const MetricPoint& point : finished.curve(m)) {
                    metric.bindValue(0, 3);
                    metric.bindValue(1, QString::fromLatin1(scalelab::metric_name(m).data()));
                    metric.bindValue(2, qint64(point.step));
                    metric.bindValue(3, point.epoch);
                    metric.bindValue(4, point.seconds);
                    metric.bindValue(5,
                                     std::isnan(point.value) ? QVariant() : QVariant(point.value));
                    QVERIFY2(metric.exec(), qPrintable(metric.lastError().text()));
                }
            QVERIFY(db.commit());
            QCOMPARE(file.scalar(QStringLiteral("PRAGMA user_version")).toInt(), 1);
            QCOMPARE(file.scalar(QStringLiteral("SELECT count(*) FROM pragma_table_info('runs') "
                                                "WHERE name = 'tags_json'"))
                         .toInt(),
                     0);
        }
        const qint64 metric_rows =
            SqliteFile(path).scalar(QStringLiteral("SELECT count(*) FROM metrics")).toLongLong();

        auto store = RunStore::open(path);
        const std::vector<StoredRun> runs = store->list_runs();
        QCOMPARE(runs.size(), std::size_t{2});
        QCOMPARE(runs[0].id, std::int64_t{3});
        QCOMPARE(runs[0].name, finished.name);
        QCOMPARE(runs[0].state, RunState::Finished);
        QCOMPARE(runs[0].machine, QStringLiteral("old host"));
        QCOMPARE(runs[0].created, QDateTime(QDate(2024, 5, 1), QTime(10, 0), Qt::UTC));
        QCOMPARE(runs[0].ended_at, QDateTime(QDate(2024, 5, 1), QTime(10, 5), Qt::UTC));
        QCOMPARE(runs[0].info.global_batch, 256);
        QCOMPARE(runs[0].steps, finished.step);
        QCOMPARE(runs[0].best_val_accuracy, finished.best_val_accuracy());
        QVERIFY(runs[0].tags.isEmpty());
        QVERIFY(runs[0].group.isEmpty());  // schema 4's column, '' for the runs before it
        QCOMPARE(scalelab::run_spec_to_json(runs[0].spec),
                 scalelab::run_spec_to_json(finished.spec));
        // Schema 1 kept no process: a run it left running can only have been interrupted.
        QCOMPARE(runs[1].id, std::int64_t{8});
        QCOMPARE(runs[1].state, RunState::Interrupted);
        compare_curves(store->load_record(3), finished);
        store.reset();

        const SqliteFile file(path);
        QCOMPARE(file.scalar(QStringLiteral("PRAGMA user_version")).toInt(),
                 RunStore::schema_version);
        QCOMPARE(file.scalar(QStringLiteral("SELECT count(*) FROM metrics")).toLongLong(),
                 metric_rows);
    }

    // A schema-3 store whose run's record has one field more than its table (what the fuzzer
    // found): quick_check sees nothing, but upgrading lends that NULL to the new NOT NULL
    // column. The upgrade is rolled back; the store is read as it is, damaged, and never written.
    void anUpgradeThatFindsDamageLeavesTheStoreAsItWas() {
        const QString path = dir_.filePath(QStringLiteral("extra-field.sqlite"));
        const RunRecord kept = sample_run(QStringLiteral("kept"), 2);
        write_run(*RunStore::open(path), kept);
        {
            const SqliteFile file(path);
            file.exec(QStringLiteral("ALTER TABLE runs DROP COLUMN group_id"));
            file.exec(QStringLiteral("PRAGMA user_version = 3"));
            file.exec(QStringLiteral("ALTER TABLE runs ADD COLUMN extra TEXT"));
            file.exec(QStringLiteral("UPDATE runs SET extra = NULL"));  // rewrites each record
            file.exec(QStringLiteral("PRAGMA writable_schema = ON"));
            file.exec(
                QStringLiteral("UPDATE sqlite_master SET sql = replace(sql, ', extra TEXT', "
                               "'') WHERE name = 'runs'"));
        }
        QCOMPARE(SqliteFile(path).scalar(QStringLiteral("PRAGMA quick_check")).toString(),
                 QStringLiteral("ok"));
        const QByteArray bytes = file_bytes(path);

        const std::optional<StoreError> error = open_error(path);
        QVERIFY(error);
        QCOMPARE(error->kind(), StoreError::Kind::Corrupt);
        QVERIFY2(QString::fromUtf8(error->what())
                     .contains("is damaged (upgrading it to schema 4 finds: NULL value in "
                               "runs.group_id): run 1 can still be read in full"),
                 error->what());
        QCOMPARE(file_bytes(path), bytes);

        const auto store = RunStore::open(path, scalelab::StoreAccess::Read);
        QVERIFY(store->damage());
        QCOMPARE(store->check_integrity()->readable_runs, std::vector<std::int64_t>{1});
        QCOMPARE(store->list_runs().size(), std::size_t{1});
        QVERIFY(store->run(1).group.isEmpty());  // the column it lacks reads as its default
        compare_curves(store->load_record(1), kept);
        QVERIFY_THROWS_EXCEPTION(StoreError, store->rename(1, QStringLiteral("renamed")));
        QCOMPARE(file_bytes(path), bytes);
    }

    // A parameter count no size_t holds (the fuzzer's find: 2.69e+24) or a negative one reads
    // as 0, not as a cast out of range.
    void aParameterCountOutOfRangeReadsAsNone() {
        const QString path = dir_.filePath(QStringLiteral("parameters.sqlite"));
        const std::int64_t id =
            write_run(*RunStore::open(path), sample_run(QStringLiteral("counted"), 1));
        for (const char* count : {"2.69e24", "-3"}) {
            SqliteFile(path).exec(
                QStringLiteral("UPDATE runs SET info_json = json_set(info_json, '$.parameters', "
                               "%1)")
                    .arg(QLatin1String(count)));
            QCOMPARE(RunStore::open(path)->run(id).info.parameters, std::size_t{0});
        }
    }

    void aRunKeepsItsGroup() {
        auto store = RunStore::open(dir_.filePath(QStringLiteral("groups.sqlite")));
        const std::int64_t member =
            store->create_run(fixture_spec(1), QStringLiteral("member"), {}, QStringLiteral("g"));
        const std::int64_t alone = store->create_run(fixture_spec(1), QStringLiteral("alone"));
        QCOMPARE(store->run(member).group, QStringLiteral("g"));
        QVERIFY(store->run(alone).group.isEmpty());
        QCOMPARE(store->list_runs().front().group, QStringLiteral("g"));
    }

    void runsOfDeadProcessesAreInterruptedAtOpen() {
        const QString path = dir_.filePath(QStringLiteral("crash.sqlite"));
        auto store = RunStore::open(path);
        const auto started_run = [&](const QString& name) {
            const std::int64_t id = store->create_run(fixture_spec(1), name);
            store->mark_started(id, RunInfo{});
            store->append_metrics(id, {MetricRow{.step = 1, .epoch = 1, .wall_time = 0.5}});
            return id;
        };
        const std::int64_t dead = started_run(QStringLiteral("dead process"));
        const std::int64_t alive = started_run(QStringLiteral("this process"));
        const std::int64_t silent_elsewhere = started_run(QStringLiteral("silent elsewhere"));
        const std::int64_t beating_elsewhere = started_run(QStringLiteral("beating elsewhere"));
        const std::int64_t queued_dead =
            store->create_run(fixture_spec(1), QStringLiteral("queued"));
        const qint64 pid = dead_pid();
        const qint64 now = QDateTime::currentMSecsSinceEpoch();
        {
            const SqliteFile file(path);
            file.exec(QStringLiteral("UPDATE runs SET pid = %1 WHERE id IN (%2, %3)")
                          .arg(pid)
                          .arg(dead)
                          .arg(queued_dead));
            file.exec(
                QStringLiteral("UPDATE runs SET host = 'elsewhere', heartbeat = %1 WHERE id = %2")
                    .arg(now - 120'000)
                    .arg(silent_elsewhere));
            file.exec(
                QStringLiteral("UPDATE runs SET host = 'elsewhere', heartbeat = %1 WHERE id = %2")
                    .arg(now)
                    .arg(beating_elsewhere));
        }

        auto reopened = RunStore::open(path);
        const StoredRun crashed = reopened->run(dead);
        QCOMPARE(crashed.state, RunState::Interrupted);
        QVERIFY2(crashed.message.contains(QStringLiteral("pid %1").arg(pid)),
                 qPrintable(crashed.message));
        QVERIFY(crashed.ended_at.isValid());
        QCOMPARE(crashed.steps, std::int64_t{1});  // what it recorded stays
        QCOMPARE(reopened->load_record(dead).curve(Metric::TrainLoss).size(), std::size_t{1});
        QCOMPARE(reopened->run(alive).state, RunState::Running);
        QCOMPARE(reopened->run(silent_elsewhere).state, RunState::Interrupted);
        QCOMPARE(reopened->run(beating_elsewhere).state, RunState::Running);
        const StoredRun never_started = reopened->run(queued_dead);
        QCOMPARE(never_started.state, RunState::Interrupted);
        QVERIFY(never_started.message.contains(QStringLiteral("before it started")));
    }

    void readersReadWhileAnotherConnectionWrites() {
        const QString path = dir_.filePath(QStringLiteral("wal.sqlite"));
        const std::int64_t id =
            RunStore::open(path)->create_run(fixture_spec(1), QStringLiteral("live"));
        constexpr int batches = 40;
        constexpr int steps_per_batch = 100;
        std::string writer_error;
        std::atomic<bool> done{false};
        std::thread writer([&] {
            try {
                auto store = RunStore::open(path);
                store->mark_started(id, RunInfo{});
                for (int batch = 0; batch < batches; ++batch) {
                    std::vector<MetricRow> rows;
                    for (int i = 1; i <= steps_per_batch; ++i) {
                        const std::int64_t step = batch * steps_per_batch + i;
                        for (const Metric metric : {Metric::TrainLoss, Metric::LearningRate})
                            rows.push_back(MetricRow{.step = step,
                                                     .epoch = 1,
                                                     .wall_time = 0.01 * double(step),
                                                     .metric = metric,
                                                     .value = 1.0 / double(step)});
                    }
                    store->append_metrics(id, rows);
                    std::this_thread::sleep_for(std::chrono::milliseconds(5));
                }
            } catch (const StoreError& error) {
                writer_error = error.what();
            }
            done = true;
        });
        auto reader = RunStore::open(path);
        int reads = 0;
        std::string reader_error;
        std::size_t last_seen = 0;
        bool went_back = false;
        try {
            while (!done) {
                const std::size_t seen = reader->load_record(id).curve(Metric::TrainLoss).size();
                went_back = went_back || seen < last_seen || reader->list_runs().size() != 1;
                last_seen = seen;
                ++reads;
            }
        } catch (const StoreError& error) {
            reader_error = error.what();
        }
        writer.join();
        QVERIFY2(writer_error.empty(), writer_error.c_str());
        QVERIFY2(reader_error.empty(), reader_error.c_str());
        QVERIFY(!went_back);
        QVERIFY(reads > 1);
        const RunRecord all = reader->load_record(id);
        QCOMPARE(all.curve(Metric::TrainLoss).size(), std::size_t{batches * steps_per_batch});
        QCOMPARE(all.step, std::int64_t{batches * steps_per_batch});
    }

    void fullDiskStopsTheWriteAndKeepsWhatWasThere() {
        const QString path = dir_.filePath(QStringLiteral("full.sqlite"));
        auto store = RunStore::open(path);
        const RunRecord run = sample_run(QStringLiteral("filling"), 1);
        const std::int64_t id = store->create_run(run.spec, run.name);
        store->append_metrics(id, rows_of_epoch(run, 1), {run.epochs[0]});
        const std::size_t kept = store->metrics(id).size();
        {
            // The store's own connection (the one named by RunStore), shrunk to the pages it
            // has: SQLite answers the next page as a full disk.
            const QStringList names =
                QSqlDatabase::connectionNames().filter(QStringLiteral("scalelab-run-store-"));
            QCOMPARE(names.size(), 1);
            QSqlQuery shrink(QSqlDatabase::database(names.front(), false));
            QVERIFY(shrink.exec(QStringLiteral("PRAGMA max_page_count = 1")));
        }
        std::vector<MetricRow> many;
        for (std::int64_t step = 1000; step < 21000; ++step)
            many.push_back(MetricRow{.step = step,
                                     .epoch = 3,
                                     .wall_time = double(step),
                                     .metric = Metric::TrainLoss,
                                     .value = 1.0});
        try {
            store->append_metrics(id, many);
            QFAIL("20,000 rows fit in a full store");
        } catch (const StoreError& error) {
            QCOMPARE(error.kind(), StoreError::Kind::DiskFull);
            QCOMPARE(QString::fromUtf8(error.what()),
                     QStringLiteral("the disk holding %1 is full: free space and try again; what "
                                    "was recorded before is kept")
                         .arg(path));
        }
        QCOMPARE(store->metrics(id).size(), kept);
        QCOMPARE(store->run(id).epochs, 1);
    }

    void lockedStoreSaysWhoToWaitFor() {
        const QString path = dir_.filePath(QStringLiteral("locked.sqlite"));
        auto store = RunStore::open(path);
        const SqliteFile other(path);
        other.exec(QStringLiteral("BEGIN IMMEDIATE"));
        // Readers go on while another program writes (WAL) ...
        QCOMPARE(store->list_runs().size(), std::size_t{0});
        // ... a writer waits for the busy timeout, then says so.
        try {
            store->create_run(fixture_spec(1), QStringLiteral("waits"));
            QFAIL("wrote past another program's write lock");
        } catch (const StoreError& error) {
            QCOMPARE(error.kind(), StoreError::Kind::Locked);
            QCOMPARE(QString::fromUtf8(error.what()),
                     QStringLiteral("%1 is locked by another program: close it or wait, then try "
                                    "again")
                         .arg(path));
        }
        other.exec(QStringLiteral("ROLLBACK"));
        QVERIFY(store->create_run(fixture_spec(1), QStringLiteral("after")) > 0);
    }

    // What each path that cannot hold a store says to do (docs/errors.md, E-STORE-PATH).
    void unusablePathsSayWhatToDo() {
        const QString plain_file = dir_.filePath(QStringLiteral("plain.txt"));
        QFile file(plain_file);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.close();
        const auto message = [](const QString& path) {
            const std::optional<StoreError> error = open_error(path);
            return error ? QString::fromUtf8(error->what()) : QString();
        };
        QCOMPARE(message(QString()),
                 QStringLiteral("no run store file was named: name one, or use the default %1")
                     .arg(RunStore::default_path()));
        QCOMPARE(message(plain_file + QStringLiteral("/runs.sqlite")),
                 QStringLiteral("cannot create the folder %1 for the run store: choose a store in "
                                "a folder you can write to")
                     .arg(plain_file));
        QCOMPARE(message(dir_.path()),
                 QStringLiteral("%1 is a folder, not a run store: name a file, e.g. %1/runs.sqlite")
                     .arg(dir_.path()));
        const QString device = message(QStringLiteral("/dev/null"));
        QVERIFY2(device.startsWith(QStringLiteral("cannot read /dev/null (")) &&
                     device.endsWith(QStringLiteral(
                         "): check that it is a file you may read, or open another")),
                 qPrintable(device));
    }

    // SQLite's other failures, each with what to do (docs/errors.md, E-STORE-WRITE).
    void sqliteFailuresSayWhatToDo() {
        // A link to itself: SQLite cannot open what it names.
        const QString loop = dir_.filePath(QStringLiteral("loop.sqlite"));
        QVERIFY(QFile::link(loop, loop));
        const std::optional<StoreError> cannot_open = open_error(loop);
        QVERIFY(cannot_open);
        QCOMPARE(cannot_open->kind(), StoreError::Kind::Unreadable);
        QVERIFY2(QString::fromUtf8(cannot_open->what())
                         .startsWith(QStringLiteral("cannot open %1 (").arg(loop)) &&
                     QString::fromUtf8(cannot_open->what())
                         .endsWith(QStringLiteral("): check that its folder exists and that you "
                                                  "may read and write it")),
                 cannot_open->what());

        // The store's own connection made read-only, then left inside a transaction.
        const auto write_error = [&](const QString& name, const QString& sql) {
            const QString path = dir_.filePath(name);
            auto store = RunStore::open(path);
            const QStringList names =
                QSqlDatabase::connectionNames().filter(QStringLiteral("scalelab-run-store-"));
            QSqlQuery query(QSqlDatabase::database(names.front(), false));
            if (!query.exec(sql))
                return QStringLiteral("cannot run %1").arg(sql);
            try {
                store->create_run(fixture_spec(1), QStringLiteral("refused"));
            } catch (const StoreError& error) {
                return QString::fromUtf8(error.what());
            }
            return QString();
        };
        const QString read_only = write_error(QStringLiteral("query-only.sqlite"),
                                              QStringLiteral("PRAGMA query_only = 1"));
        QVERIFY2(
            read_only.startsWith(QStringLiteral("cannot write to %1 (")
                                     .arg(dir_.filePath(QStringLiteral("query-only.sqlite")))) &&
                read_only.endsWith(QStringLiteral("): make it writable or open another file")),
            qPrintable(read_only));
        const QString failed =
            write_error(QStringLiteral("in-transaction.sqlite"), QStringLiteral("BEGIN"));
        QVERIFY2(
            failed.startsWith(QStringLiteral("the run store %1 failed (")
                                  .arg(dir_.filePath(QStringLiteral("in-transaction.sqlite")))) &&
                failed.endsWith(QStringLiteral("): check the disk and try again")),
            qPrintable(failed));
    }

  private:
    QTemporaryDir dir_;
};

QTEST_MAIN(TestRunStore)
#include "test_run_store.moc"
