// The soak (issue 9): its plan, the check of the store against the plan, and scalelab-soak run
// as a script runs it, on a queue of 20 runs through the CLI's training path. The memory figure
// the soak prints is measured, not asserted here.

#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include <memory>
#include <set>

#include "run_store.h"
#include "soak_plan.h"

using scalelab::MetricRow;
using scalelab::RunInfo;
using scalelab::RunState;
using scalelab::RunStore;
using scalelab::SoakRun;

namespace {

struct SoakResult {
    int exit_code = -1;
    QString out;
    QString err;
};

SoakResult run_soak(const QStringList& args) {
    QProcess process;
    process.start(QStringLiteral(SCALELAB_SOAK_PATH), args);
    SoakResult result;
    if (!process.waitForFinished(60'000)) {
        process.kill();
        process.waitForFinished();
        result.err = QStringLiteral("timed out");
        return result;
    }
    if (process.exitStatus() == QProcess::NormalExit)
        result.exit_code = process.exitCode();
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    return result;
}

// Records `run` as the recorder would have: every step's train loss and every epoch's
// validation accuracy, up to `steps`, then its end as `state`.
std::int64_t store_run(RunStore& store, const SoakRun& run, std::int64_t steps, RunState state) {
    constexpr int steps_per_epoch = 4;
    const std::int64_t id = store.create_run(run.spec, QStringLiteral("fabricated"));
    RunInfo info;
    info.devices = run.spec.devices;
    info.steps_per_epoch = steps_per_epoch;
    store.mark_started(id, info);
    std::vector<MetricRow> rows;
    for (std::int64_t step = 1; step <= steps; ++step) {
        const int epoch = int((step - 1) / steps_per_epoch) + 1;
        rows.push_back({.step = step, .epoch = epoch, .metric = scalelab::Metric::TrainLoss});
        if (step % steps_per_epoch == 0)
            rows.push_back({.step = step, .epoch = epoch, .metric = scalelab::Metric::ValAccuracy});
    }
    store.append_metrics(id, rows);
    store.mark_ended(id, state, {});
    return id;
}

std::int64_t all_steps(const SoakRun& run) {
    return std::int64_t(run.spec.epochs) * 4;
}

bool mentions(const std::vector<QString>& problems, const QString& text) {
    return std::any_of(problems.begin(), problems.end(),
                       [&text](const QString& problem) { return problem.contains(text); });
}

}  // namespace

class TestSoak : public QObject {
    Q_OBJECT

  private slots:
    void everyTenRunsOneDivergesAndAnotherIsCancelled() {
        const std::vector<SoakRun> plan = scalelab::soak_plan(35, 5);
        QCOMPARE(plan.size(), std::size_t{35});
        for (std::size_t start = 0; start < plan.size(); start += 10) {
            int diverging = 0;
            int cancelled = 0;
            for (std::size_t i = start; i < std::min(start + 10, plan.size()); ++i) {
                diverging += plan[i].expected == RunState::Diverged ? 1 : 0;
                cancelled += plan[i].expected == RunState::Cancelled ? 1 : 0;
            }
            const int whole_block = start + 10 <= plan.size() ? 1 : 0;
            QCOMPARE(diverging, whole_block);
            QCOMPARE(cancelled, whole_block);
        }
        std::set<int> devices;
        for (const SoakRun& run : plan) {
            QCOMPARE(run.spec.validate(), std::vector<std::string>{});
            devices.insert(run.spec.devices);
            if (run.expected == RunState::Cancelled) {
                // Stopped early in a run far longer than the others: it cannot end by itself
                // before the stop arrives.
                QVERIFY(run.cancel_at_step >= 1);
                QVERIFY(run.spec.epochs >= 10 * plan.front().spec.epochs);
            } else {
                QCOMPARE(run.cancel_at_step, std::int64_t{0});
            }
            if (run.expected == RunState::Diverged)
                QVERIFY(run.spec.lr > 1000 * plan.front().spec.lr);
        }
        QCOMPARE(devices, (std::set<int>{1, 2, 3, 4}));
    }

    void theSeedDecidesWhichRunsDivergeOrStop() {
        const auto ends_of = [](std::uint64_t seed) {
            std::vector<std::pair<RunState, std::int64_t>> ends;
            for (const SoakRun& run : scalelab::soak_plan(100, seed))
                ends.emplace_back(run.expected, run.cancel_at_step);
            return ends;
        };
        QCOMPARE(ends_of(3), ends_of(3));
        QVERIFY(ends_of(3) != ends_of(4));
    }

    void theStoreCheckNamesEveryRunThatDiffersFromThePlan() {
        const QTemporaryDir folder;
        const std::vector<SoakRun> plan = scalelab::soak_plan(3, 1);
        const std::unique_ptr<RunStore> store = RunStore::open(folder.filePath("runs.sqlite"));
        store_run(*store, plan[0], all_steps(plan[0]), RunState::Finished);
        QCOMPARE(scalelab::soak_store_problems(*store, plan),
                 std::vector<QString>{QStringLiteral("the store lists 1 runs, not the 3 planned")});

        store_run(*store, plan[1], 3, RunState::Finished);  // short of its steps
        store_run(*store, plan[2], all_steps(plan[2]), RunState::Cancelled);
        const std::vector<QString> problems = scalelab::soak_store_problems(*store, plan);
        QCOMPARE(problems.size(), std::size_t{3});
        QVERIFY(mentions(problems, QStringLiteral("run 2 of 3 (store id 2) took 3 of its")));
        QVERIFY(mentions(problems, QStringLiteral("run 2 of 3 (store id 2) has 0 validation")));
        QVERIFY(mentions(problems, QStringLiteral("run 3 of 3 (store id 3) is cancelled")));
    }

    void theCliSoakEndsEveryRunAsPlannedAndStoresThemAll() {
        const QTemporaryDir folder;
        const QString path = folder.filePath("soak.sqlite");
        const SoakResult result = run_soak({"--runs", "20", "--seed", "11", "--store", path});
        // Memory growth is the benchmark's figure: only wrong runs may fail the test.
        QVERIFY2(result.exit_code == scalelab::soak_passed ||
                     result.exit_code == scalelab::soak_memory_growth,
                 qPrintable(result.out + result.err));
        QVERIFY(result.out.contains(QStringLiteral("resident after run 10")));

        const std::vector<SoakRun> plan = scalelab::soak_plan(20, 11);
        const std::unique_ptr<RunStore> store = RunStore::open(path);
        const std::vector<scalelab::StoredRun> listed = store->list_runs();
        QCOMPARE(listed.size(), plan.size());
        for (std::size_t i = 0; i < plan.size(); ++i)
            QCOMPARE(listed[i].state, plan[i].expected);
        QCOMPARE(scalelab::soak_store_problems(*store, plan), std::vector<QString>{});
    }

    void wrongOptionsSayWhatToChange() {
        const SoakResult no_runs = run_soak({"--runs", "0"});
        QCOMPARE(no_runs.exit_code, int(scalelab::soak_bad_input));
        QVERIFY2(no_runs.err.contains(QStringLiteral("--runs must be a whole number from 1")),
                 qPrintable(no_runs.err));

        const QTemporaryDir folder;
        const QString taken = folder.filePath("taken.sqlite");
        RunStore::open(taken);
        const SoakResult existing = run_soak({"--store", taken});
        QCOMPARE(existing.exit_code, int(scalelab::soak_bad_input));
        QVERIFY2(existing.err.contains(QStringLiteral("does not exist yet")),
                 qPrintable(existing.err));
    }
};

QTEST_MAIN(TestSoak)
#include "test_soak.moc"
