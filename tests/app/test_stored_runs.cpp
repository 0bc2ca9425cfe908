#include <QProcess>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

#include <memory>
#include <vector>

#include "run_collection.h"
#include "run_fixtures.h"
#include "run_store.h"
#include "short_runs.h"

using namespace scalelab;
using scalelab::testing::endless_synthetic_run;
using scalelab::testing::fixture_spec;
using scalelab::testing::short_synthetic_run;

namespace {

bool ended(const RunCollection& runs, int id) {
    const RunRecord* run = runs.find(id);
    return run != nullptr && !is_active(run->state);
}

// What another process (scalelab-cli train --store) writes for `steps` steps of a run:
// training loss 1/step, and a validation accuracy at every 10th step.
std::vector<MetricRow> cli_rows(std::int64_t first, std::int64_t last) {
    std::vector<MetricRow> rows;
    for (std::int64_t step = first; step <= last; ++step) {
        rows.push_back({step, 1, 0.1 * double(step), Metric::TrainLoss, 1.0 / double(step)});
        if (step % 10 == 0)
            rows.push_back({step, int(step / 10), 0.1 * double(step), Metric::ValAccuracy,
                            0.5 + 0.01 * double(step)});
    }
    return rows;
}

RunInfo cli_info() {
    RunInfo info;
    info.devices = 2;
    info.global_batch = 256;
    info.steps_per_epoch = 10;
    return info;
}

// Starts `scalelab-cli train` recording into `store` a run that goes on until stopped.
bool start_endless_cli_run(QProcess& cli, const QString& store) {
    cli.start(QStringLiteral(SCALELAB_CLI_PATH),
              {"train", "--store", store, "--name", "cli", "--dataset", "synthetic",
               "--synthetic-train", "1024", "--synthetic-test", "64", "--epochs", "1000", "--batch",
               "32", "--model", "mlp", "--threads", "1"});
    return cli.waitForStarted();
}

// A store write hook: the connection refuses every change from now on (SQLITE_READONLY).
void make_read_only(QSqlDatabase& connection) {
    QSqlQuery(connection).exec(QStringLiteral("PRAGMA query_only = 1"));
}

}  // namespace

class TestStoredRuns : public QObject {
    Q_OBJECT

    QTemporaryDir folder_;
    QString path_;

  private slots:
    void init() {
        QVERIFY(folder_.isValid());
        path_ =
            folder_.filePath(QStringLiteral("runs-%1.sqlite").arg(QTest::currentTestFunction()));
    }

    void runsStartedHereAreStoredAndListedNextTimeWithoutCurves() {
        std::vector<MetricPoint> loss;
        std::optional<double> best;
        int id = 0;
        {
            RunController controller;
            RunCollection runs(controller);
            QVERIFY(runs.setStore(RunStore::open(path_)));
            id = runs.start(short_synthetic_run(2), QStringLiteral("first"));
            QVERIFY(id != 0);
            QTRY_VERIFY_WITH_TIMEOUT(ended(runs, id), 60000);
            QVERIFY2(runs.find(id)->state == RunState::Finished,
                     qPrintable(runs.find(id)->message));
            loss = runs.find(id)->curve(Metric::TrainLoss);
            best = runs.find(id)->best_val_accuracy();
            QCOMPARE(loss.size(), std::size_t{16});
            QVERIFY(best.has_value());
        }

        RunController controller;
        RunCollection runs(controller);
        QSignalSpy curves(&runs, &RunCollection::curvesChanged);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        QCOMPARE(runs.ids(), std::vector<int>{id});
        const RunRecord& listed = *runs.find(id);
        QCOMPARE(listed.name, QStringLiteral("first"));
        QVERIFY(listed.state == RunState::Finished);
        QVERIFY(!listed.curves_loaded);
        QVERIFY(!listed.visible);  // old runs do not flood the charts
        QVERIFY(listed.curve(Metric::TrainLoss).empty());
        // The table's figures come from the stored summary meanwhile.
        QCOMPARE(listed.best_val_accuracy(), best);
        QCOMPARE(listed.progress(), 1.0);
        QVERIFY(listed.mean_images_per_s().value() > 0);

        runs.setVisible(id, true);
        const RunRecord& shown = *runs.find(id);
        QVERIFY(shown.visible && shown.curves_loaded);
        QCOMPARE(curves.count(), 1);
        const auto& reloaded = shown.curve(Metric::TrainLoss);
        QCOMPARE(reloaded.size(), loss.size());
        for (std::size_t i = 0; i < loss.size(); ++i) {
            QCOMPARE(reloaded[i].step, loss[i].step);
            QCOMPARE(reloaded[i].value, loss[i].value);
            QCOMPARE(reloaded[i].samples, loss[i].samples);
        }
        QCOMPARE(shown.curve(Metric::ValAccuracy).size(), std::size_t{2});
        QCOMPARE(shown.best_val_accuracy(), best);
    }

    void queuedRunsAreStoredAsCreatedAndStoppedOnesAsCancelled() {
        RunController controller;
        RunCollection runs(controller);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        const int running = runs.start(endless_synthetic_run(), QStringLiteral("long"));
        const int queued = runs.start(short_synthetic_run(), QString());
        QCOMPARE(runs.find(queued)->name, QStringLiteral("run %1").arg(queued));

        const std::unique_ptr<RunStore> reader = RunStore::open(path_);
        QVERIFY(reader->run(queued).state == RunState::Queued);
        QCOMPARE(reader->run(queued).name, runs.find(queued)->name);
        QTRY_VERIFY_WITH_TIMEOUT(runs.find(running)->step >= 1, 60000);
        QVERIFY(!runs.setStore(nullptr));  // they record into this store: refused
        runs.stopAll();
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, running) && ended(runs, queued), 60000);
        // The running one's end came from its recorder, the queued one's from the collection.
        QVERIFY(reader->run(running).state == RunState::Cancelled);
        QVERIFY(reader->run(running).steps >= 1);
        QVERIFY(reader->run(queued).state == RunState::Cancelled);
        QVERIFY(!reader->run(queued).message.isEmpty());
    }

    void aRunWrittenByAnotherConnectionAppearsAndGrows() {
        RunController controller;
        RunCollection runs(controller);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        QSignalSpy errors(&runs, &RunCollection::storeError);

        // The other process: its own connection to the same file.
        const std::unique_ptr<RunStore> cli = RunStore::open(path_);
        const int id = int(cli->create_run(fixture_spec(2), QStringLiteral("from the terminal")));
        cli->mark_started(id, cli_info());
        cli->append_metrics(id, cli_rows(1, 15));

        QTRY_VERIFY_WITH_TIMEOUT(runs.find(id) != nullptr, 5000);
        // Training elsewhere now: shown, to be watched.
        QTRY_COMPARE_WITH_TIMEOUT(runs.find(id)->curve(Metric::TrainLoss).size(), std::size_t{15},
                                  5000);
        QVERIFY(runs.find(id)->visible);
        QVERIFY(runs.find(id)->state == RunState::Running);

        cli->append_metrics(id, cli_rows(16, 20));
        QTRY_COMPARE_WITH_TIMEOUT(runs.find(id)->curve(Metric::TrainLoss).size(), std::size_t{20},
                                  5000);
        const auto& loss = runs.find(id)->curve(Metric::TrainLoss);
        for (std::size_t i = 0; i < loss.size(); ++i) {
            QCOMPARE(loss[i].step, std::int64_t(i + 1));
            QCOMPARE(loss[i].value, 1.0 / double(i + 1));
            QCOMPARE(loss[i].samples, 256.0 * double(i + 1));
        }
        const auto& accuracy = runs.find(id)->curve(Metric::ValAccuracy);
        QCOMPARE(accuracy.size(), std::size_t{2});
        QCOMPARE(accuracy.back().value, 0.7);

        cli->mark_ended(id, RunState::Finished, QString());
        QTRY_VERIFY_WITH_TIMEOUT(runs.find(id)->state == RunState::Finished, 5000);
        QCOMPARE(runs.find(id)->best_val_accuracy().value(), 0.7);

        // Deleted by the other process: gone here too.
        cli->delete_runs({id});
        QTRY_VERIFY_WITH_TIMEOUT(runs.find(id) == nullptr, 5000);
        QCOMPARE(errors.count(), 0);
    }

    void aCliRunAppearsAndGrowsWhileItTrains() {
        RunController controller;
        RunCollection runs(controller);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        QSignalSpy errors(&runs, &RunCollection::storeError);
        QProcess cli;
        QVERIFY(start_endless_cli_run(cli, path_));
        QTRY_VERIFY_WITH_TIMEOUT(runs.ids().size() == 1, 20000);
        const int id = runs.ids().front();
        QCOMPARE(runs.find(id)->name, QStringLiteral("cli"));
        // Shown while it trains, its curves growing with what the CLI commits each second.
        QTRY_VERIFY_WITH_TIMEOUT(!runs.find(id)->curve(Metric::TrainLoss).empty(), 20000);
        QVERIFY(runs.find(id)->visible);
        const std::size_t seen = runs.find(id)->curve(Metric::TrainLoss).size();
        QTRY_VERIFY_WITH_TIMEOUT(runs.find(id)->curve(Metric::TrainLoss).size() > seen, 20000);

        ::kill(pid_t(cli.processId()), SIGINT);  // Ctrl+C: the CLI cancels the run
        QTRY_COMPARE_WITH_TIMEOUT(cli.state(), QProcess::NotRunning, 20000);
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, id), 5000);
        const RunRecord& run = *runs.find(id);
        QVERIFY2(run.state == RunState::Cancelled, qPrintable(run.message));
        // At its end the whole run was read once more: every point the CLI recorded.
        const std::unique_ptr<RunStore> reader = RunStore::open(path_);
        const RunRecord stored = reader->load_record(id);
        QCOMPARE(run.curve(Metric::TrainLoss).size(), stored.curve(Metric::TrainLoss).size());
        QCOMPARE(run.curve(Metric::TrainLoss).back().value,
                 stored.curve(Metric::TrainLoss).back().value);
        QCOMPARE(run.step, stored.step);
        QCOMPARE(errors.count(), 0);
    }

    void aCliRunKilledWhileWatchedShowsAsInterrupted() {
        RunController controller;
        RunCollection runs(controller);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        QProcess cli;
        QVERIFY(start_endless_cli_run(cli, path_));
        QTRY_VERIFY_WITH_TIMEOUT(runs.ids().size() == 1, 20000);
        const int id = runs.ids().front();
        QTRY_VERIFY_WITH_TIMEOUT(!runs.find(id)->curve(Metric::TrainLoss).empty(), 20000);

        cli.kill();  // SIGKILL: the process commits nothing more, not even its end
        QVERIFY(cli.waitForFinished(10000));
        QTRY_VERIFY_WITH_TIMEOUT(ended(runs, id), 5000);
        QVERIFY2(runs.find(id)->state == RunState::Interrupted, qPrintable(runs.find(id)->message));
        QVERIFY2(runs.find(id)->message.contains(QString::number(cli.processId())) ||
                     runs.find(id)->message.contains(QStringLiteral("ended while it ran")),
                 qPrintable(runs.find(id)->message));
    }

    void renameTagsAndDeleteReachTheStore() {
        RunController controller;
        RunCollection runs(controller);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        const int a = runs.add(testing::fixture_run(fixture_spec(1), "a", 1000, {0.8, 0.9}));
        const int b = runs.add(testing::fixture_run(fixture_spec(2), "b", 1800, {0.7}));
        const std::unique_ptr<RunStore> reader = RunStore::open(path_);
        QCOMPARE(reader->list_runs().size(), std::size_t{2});
        QCOMPARE(reader->load_record(a).curve(Metric::TrainLoss).size(), std::size_t{20});

        runs.rename(a, QStringLiteral("  renamed "));
        QCOMPARE(reader->run(a).name, QStringLiteral("renamed"));
        runs.setTags(a, {QStringLiteral("lars "), QStringLiteral(""), QStringLiteral("week 2"),
                         QStringLiteral("lars")});
        QCOMPARE(runs.find(a)->tags, (QStringList{"lars", "week 2"}));
        QCOMPARE(reader->run(a).tags, (QStringList{"lars", "week 2"}));

        QVERIFY(runs.remove(b));
        QVERIFY(runs.find(b) == nullptr);
        QCOMPARE(reader->list_runs().size(), std::size_t{1});
        QVERIFY_THROWS_EXCEPTION(StoreError, reader->run(b));
    }

    void aRunThatCannotBeRecordedEndsAsFailedWithTheReason() {
        { const std::unique_ptr<RunStore> store = RunStore::open(path_); }
        RunController controller;
        controller.setStorePath(path_);
        std::vector<RunEnd> ends;
        connect(&controller, &RunController::runEnded, this,
                [&](int, const RunEnd& end) { ends.push_back(end); });
        controller.start(endless_synthetic_run(), 424242);  // no such run in the store
        QTRY_COMPARE_WITH_TIMEOUT(ends.size(), std::size_t{1}, 60000);
        QVERIFY(ends.front().status == RunStatus::Failed);
        QVERIFY2(QString::fromStdString(ends.front().message).contains(QStringLiteral("424242")),
                 ends.front().message.c_str());
        QVERIFY(QString::fromStdString(ends.front().message).contains(QStringLiteral("store")));
    }

    // What the store refuses is not done, and storeError says which edit failed and why
    // (docs/errors.md, E-STORE-IN-USE): a run it cannot create is not started.
    void editsTheStoreRefusesAreNotDone() {
        RunController controller;
        RunCollection runs(controller);
        QVERIFY(runs.setStore(RunStore::open(path_)));
        const int kept =
            runs.add(testing::fixture_run(fixture_spec(1), QStringLiteral("kept"), 1000, {0.8}));
        QVERIFY(kept != 0);
        QSignalSpy errors(&runs, &RunCollection::storeError);
        fault_injection::set_store_write_hook(&make_read_only);
        QCOMPARE(runs.start(short_synthetic_run()), 0);
        QCOMPARE(
            runs.add(testing::fixture_run(fixture_spec(2), QStringLiteral("more"), 1000, {0.8})),
            0);
        runs.rename(kept, QStringLiteral("renamed"));
        runs.setTags(kept, {QStringLiteral("tagged")});
        QVERIFY(!runs.remove(kept));
        fault_injection::set_store_write_hook(nullptr);

        QCOMPARE(runs.ids(), std::vector<int>{kept});
        QCOMPARE(runs.find(kept)->name, QStringLiteral("kept"));
        const QStringList edits{
            QStringLiteral("The run store cannot create the run, so it was not started"),
            QStringLiteral("The run store cannot add \u201cmore\u201d"),
            QStringLiteral("The run store cannot rename \u201ckept\u201d"),
            QStringLiteral("The run store cannot tag \u201ckept\u201d"),
            QStringLiteral("The run store cannot delete \u201ckept\u201d"),
        };
        QCOMPARE(errors.size(), edits.size());
        for (qsizetype i = 0; i < edits.size(); ++i) {
            const QString message = errors[i].front().toString();
            QVERIFY2(
                message.startsWith(edits[i] +
                                   QStringLiteral(": cannot write to %1 (").arg(path_)) &&
                    message.endsWith(QStringLiteral("): make it writable or open another file")),
                qPrintable(message));
        }
    }
};

QTEST_GUILESS_MAIN(TestStoredRuns)
#include "test_stored_runs.moc"
