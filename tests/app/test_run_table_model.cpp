#include <QAbstractItemModelTester>
#include <QSignalSpy>
#include <QtTest>

#include "run_collection.h"
#include "run_controller.h"
#include "run_fixtures.h"
#include "run_table_model.h"
#include "short_runs.h"

using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::RunTableModel;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;
using scalelab::testing::short_synthetic_run;
using scalelab::testing::with_threads;

namespace {

QString text(const RunTableModel& model, int row, int column) {
    return model.data(model.index(row, column)).toString();
}

QString tip(const RunTableModel& model, int row, int column) {
    return model.data(model.index(row, column), Qt::ToolTipRole).toString();
}

// `run` as one of the repeats `group`, run with `seed`.
RunRecord grouped(RunRecord run, const QString& group, std::uint64_t seed) {
    run.group = group;
    run.spec.seed = seed;
    return run;
}

}  // namespace

class TestRunTableModel : public QObject {
    Q_OBJECT

  private slots:
    void rows_follow_the_collection() {
        RunController controller;
        RunCollection runs(controller);
        const int first = runs.add(fixture_run(fixture_spec(1), "first", 1000, {0.8}));
        RunTableModel model(runs);
        QSignalSpy inserted(&model, &QAbstractItemModel::rowsInserted);
        QSignalSpy removed(&model, &QAbstractItemModel::rowsRemoved);

        const int second = runs.add(fixture_run(fixture_spec(2), "second", 1800, {0.8}));
        QCOMPARE(inserted.count(), 1);
        QCOMPARE(inserted.front().at(1).toInt(), 1);
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.columnCount(), int(RunTableModel::ColumnCount));
        QCOMPARE(model.runId(model.index(0, 0)), first);
        QCOMPARE(model.runId(model.index(1, 0)), second);
        QCOMPARE(model.data(model.index(1, 0), RunTableModel::RunIdRole).toInt(), second);
        QCOMPARE(text(model, 1, RunTableModel::NameColumn), QStringLiteral("second"));

        QVERIFY(runs.remove(first));
        QCOMPARE(removed.count(), 1);
        QCOMPARE(removed.front().at(1).toInt(), 0);
        QCOMPARE(model.rowCount(), 1);
        QCOMPARE(model.runId(model.index(0, 0)), second);
        QVERIFY(!model.indexOfRun(first).isValid());
    }

    void columns_describe_a_finished_run() {
        RunController controller;
        RunCollection runs(controller);
        RunSpec spec = fixture_spec(2);
        spec.lr_scaling = scalelab::LrScaling::Linear;
        spec.reference_batch = 128;
        spec.schedule = scalelab::ScheduleKind::Cosine;
        spec.warmup_length = 2;
        // 256 images a step at 2560 images/s: 0.1 s a step, 1.0 s an epoch of 10 steps.
        runs.add(fixture_run(spec, "wide", 2560, {0.80, 0.88, 0.912}));
        RunTableModel model(runs);

        QCOMPARE(text(model, 0, RunTableModel::ConfigurationColumn),
                 QStringLiteral("cnn · fashion-mnist · 2×128 = 256 · 1 thread per device · sgd lr "
                                "0.1 (linear → 0.2) · "
                                "cosine · warm-up 2 epochs"));
        QCOMPARE(text(model, 0, RunTableModel::StatusColumn), QStringLiteral("finished"));
        QCOMPARE(
            model.data(model.index(0, RunTableModel::StatusColumn), RunTableModel::ProgressRole)
                .toDouble(),
            1.0);
        QCOMPARE(text(model, 0, RunTableModel::BestAccuracyColumn), QStringLiteral("0.912"));
        QCOMPARE(text(model, 0, RunTableModel::TimeToTargetColumn),
                 QStringLiteral("0.90 in 3.0 s (epoch 3)"));
        QCOMPARE(text(model, 0, RunTableModel::ImagesPerSecondColumn), QStringLiteral("2560"));
        QCOMPARE(text(model, 0, RunTableModel::EfficiencyColumn),
                 QStringLiteral("no 1-device run"));
        const QString tip =
            model.data(model.index(0, RunTableModel::NameColumn), Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("global batch 256")), qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("schedule: cosine")), qPrintable(tip));
    }

    void status_shows_progress_eta_and_failures() {
        RunController controller;
        RunCollection runs(controller);
        // 5 of 20 steps done in 10 s: 25%, and 15 steps of 2 s left.
        RunRecord running;
        running.spec = fixture_spec(1);
        running.spec.epochs = 2;
        running.state = RunState::Running;
        running.started = true;
        running.info.steps_per_epoch = 10;
        running.step = 5;
        running.train_seconds = 10;
        runs.add(running);
        RunRecord failed = fixture_run(fixture_spec(1), "failed", 1000, {0.5});
        failed.state = RunState::Failed;
        failed.message = QStringLiteral("out of memory on device 1");
        runs.add(failed);
        RunRecord queued;
        queued.spec = fixture_spec(1);
        runs.add(queued);
        RunTableModel model(runs);

        QCOMPARE(text(model, 0, RunTableModel::StatusColumn),
                 QStringLiteral("running · 25% · ETA 0:30"));
        QCOMPARE(
            model.data(model.index(0, RunTableModel::StatusColumn), RunTableModel::ProgressRole)
                .toDouble(),
            0.25);
        QCOMPARE(model.data(model.index(0, 0), RunTableModel::StateRole).toInt(),
                 int(RunState::Running));
        QCOMPARE(text(model, 0, RunTableModel::BestAccuracyColumn), QStringLiteral("—"));
        QCOMPARE(text(model, 1, RunTableModel::StatusColumn),
                 QStringLiteral("failed: out of memory on device 1"));
        QCOMPARE(
            model.data(model.index(1, RunTableModel::StatusColumn), Qt::ToolTipRole).toString(),
            QStringLiteral("out of memory on device 1"));
        QCOMPARE(text(model, 2, RunTableModel::StatusColumn), QStringLiteral("queued"));
        QCOMPARE(text(model, 2, RunTableModel::ImagesPerSecondColumn), QStringLiteral("—"));
    }

    void scaling_efficiency_against_the_one_device_run() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(1), "one", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "two", 1860, {0.8}));
        RunTableModel model(runs);
        QCOMPARE(text(model, 0, RunTableModel::EfficiencyColumn), QStringLiteral("—"));
        QCOMPARE(text(model, 1, RunTableModel::EfficiencyColumn), QStringLiteral("93%"));
        // The tool tip says which run the figure is measured against.
        QCOMPARE(tip(model, 1, RunTableModel::EfficiencyColumn),
                 QStringLiteral("1,860 images/s against 2 × 1,000 of “one” (1 device × 1 "
                                "thread)"));
    }

    void images_per_s_compare_only_with_a_baseline_of_the_same_device_unit() {
        RunController controller;
        RunCollection runs(controller);
        const int base = runs.add(fixture_run(fixture_spec(1), "base", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "same unit", 1800, {0.8}));
        runs.add(with_threads(fixture_run(fixture_spec(1), "2 threads", 1500, {0.8}), 2));
        runs.setBaseline(base);
        RunTableModel model(runs);
        QCOMPARE(text(model, 1, RunTableModel::ImagesPerSecondColumn),
                 QStringLiteral("1800 (+80%)"));
        QCOMPARE(text(model, 2, RunTableModel::ImagesPerSecondColumn), QStringLiteral("1500"));
        QVERIFY2(tip(model, 2, RunTableModel::ImagesPerSecondColumn)
                     .startsWith(QStringLiteral("Not compared with the baseline “base”")),
                 qPrintable(tip(model, 2, RunTableModel::ImagesPerSecondColumn)));
    }

    void no_efficiency_without_a_matching_one_device_run() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(with_threads(fixture_run(fixture_spec(1), "one, 2 threads", 1500, {0.8}), 2));
        runs.add(fixture_run(fixture_spec(2), "two", 1860, {0.8}));
        RunSpec shared_spec = fixture_spec(2);
        shared_spec.threads = 0;
        runs.add(fixture_run(shared_spec, "two sharing", 1860, {0.8}));
        RunTableModel model(runs);
        QCOMPARE(text(model, 1, RunTableModel::EfficiencyColumn),
                 QStringLiteral("no 1-device run"));
        QCOMPARE(tip(model, 1, RunTableModel::EfficiencyColumn),
                 QStringLiteral("no 1-device run to compare with: run the same configuration on "
                                "1 device × 1 thread"));
        // Two devices sharing both cores compare with the 1-device run on both cores.
        QCOMPARE(text(model, 2, RunTableModel::EfficiencyColumn),
                 QStringLiteral("124% (same cores)"));
        QVERIFY(tip(model, 2, RunTableModel::EfficiencyColumn)
                    .contains(QStringLiteral("“one, 2 threads”")));
    }

    void other_rows_show_deltas_against_the_baseline() {
        RunController controller;
        RunCollection runs(controller);
        // Both reach 0.90 at epoch 3; "fast" takes 0.05 s a step, "base" 0.1 s.
        const int base =
            runs.add(fixture_run(fixture_spec(2), "base", 2560, {0.80, 0.88, 0.899, 0.90}));
        runs.add(fixture_run(fixture_spec(2), "fast", 5120, {0.80, 0.88, 0.912}));
        RunTableModel model(runs);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

        runs.setBaseline(base);
        QCOMPARE(changed.count(), 1);  // every row at once: the deltas all change
        QCOMPARE(changed.front().at(1).value<QModelIndex>().row(), 1);

        QCOMPARE(text(model, 0, RunTableModel::NameColumn), QStringLiteral("base (baseline)"));
        QCOMPARE(model.data(model.index(0, 0), Qt::EditRole).toString(), QStringLiteral("base"));
        QVERIFY(model.data(model.index(0, 0), RunTableModel::BaselineRole).toBool());
        QVERIFY(!model.data(model.index(1, 0), RunTableModel::BaselineRole).toBool());
        QCOMPARE(text(model, 0, RunTableModel::BestAccuracyColumn), QStringLiteral("0.900"));
        QCOMPARE(text(model, 1, RunTableModel::BestAccuracyColumn),
                 QStringLiteral("0.912 (+0.012)"));
        QCOMPARE(text(model, 1, RunTableModel::ImagesPerSecondColumn),
                 QStringLiteral("5120 (+100%)"));
        // base reaches 0.90 at epoch 4 (4.0 s); fast at epoch 3 (1.5 s).
        QCOMPARE(text(model, 0, RunTableModel::TimeToTargetColumn),
                 QStringLiteral("0.90 in 4.0 s (epoch 4)"));
        QCOMPARE(text(model, 1, RunTableModel::TimeToTargetColumn),
                 QStringLiteral("0.90 in 1.5 s (epoch 3, −2.5 s)"));

        runs.setBaseline(0);
        QCOMPARE(text(model, 1, RunTableModel::BestAccuracyColumn), QStringLiteral("0.912"));
        QCOMPARE(text(model, 0, RunTableModel::NameColumn), QStringLiteral("base"));
    }

    void the_name_renames_and_toggles_visibility() {
        RunController controller;
        RunCollection runs(controller);
        const int id = runs.add(fixture_run(fixture_spec(1), "old", 1000, {0.8}));
        RunTableModel model(runs);
        const QModelIndex name = model.index(0, RunTableModel::NameColumn);
        QVERIFY(model.flags(name) & Qt::ItemIsEditable);
        QVERIFY(model.flags(name) & Qt::ItemIsUserCheckable);
        QVERIFY(!(model.flags(model.index(0, RunTableModel::StatusColumn)) & Qt::ItemIsEditable));

        QVERIFY(model.setData(name, QStringLiteral("new name")));
        QCOMPARE(runs.find(id)->name, QStringLiteral("new name"));
        QVERIFY(!model.setData(name, QStringLiteral("   ")));
        QCOMPARE(runs.find(id)->name, QStringLiteral("new name"));
        QVERIFY(!model.setData(model.index(0, RunTableModel::StatusColumn), QStringLiteral("x")));

        QCOMPARE(model.data(name, Qt::CheckStateRole).toInt(), int(Qt::Checked));
        QVERIFY(model.setData(name, int(Qt::Unchecked), Qt::CheckStateRole));
        QVERIFY(!runs.find(id)->visible);
        QCOMPARE(model.data(name, Qt::CheckStateRole).toInt(), int(Qt::Unchecked));
        QVERIFY(model.setData(name, int(Qt::Checked), Qt::CheckStateRole));
        QVERIFY(runs.find(id)->visible);
    }

    void step_updates_reach_the_views_throttled() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(2), "a", 1000, {0.8}));
        const int b = runs.add(fixture_run(fixture_spec(2), "b", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "c", 1000, {0.8}));
        RunTableModel model(runs);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);

        // A running run reports every step; the model must not pass each one on.
        for (int step = 0; step < 200; ++step)
            emit runs.curvesChanged(b);
        QCOMPARE(changed.count(), 0);
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 2000);
        const QModelIndex top_left = changed.front().at(0).value<QModelIndex>();
        const QModelIndex bottom_right = changed.front().at(1).value<QModelIndex>();
        QCOMPARE(top_left.row(), 1);
        QCOMPARE(bottom_right.row(), 1);
        QCOMPARE(top_left.column(), 0);
        QCOMPARE(bottom_right.column(), RunTableModel::ColumnCount - 1);
        QTest::qWait(3 * RunTableModel::update_interval_ms);
        QCOMPARE(changed.count(), 1);
    }

    void a_one_device_run_changes_the_efficiency_of_every_row() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(2), "two", 1800, {0.8}));
        runs.add(fixture_run(fixture_spec(4), "four", 3400, {0.8}));
        const int one = runs.add(fixture_run(fixture_spec(1), "one", 1000, {0.8}));
        RunTableModel model(runs);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        emit runs.runChanged(one);
        QTRY_COMPARE_WITH_TIMEOUT(changed.count(), 1, 2000);
        QCOMPARE(changed.front().at(0).value<QModelIndex>().row(), 0);
        QCOMPARE(changed.front().at(1).value<QModelIndex>().row(), 2);
    }

    // 8 devices × 128 at 1024 images/s: 1 s a step, 10 s an epoch of 10 steps.
    void notes_say_what_is_worth_seeing() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(8), "crowded", 1024, {0.80, 0.86, 0.91}));
        runs.add(fixture_run(fixture_spec(1), "plain", 1000, {0.5}));
        RunTableModel model(runs);

        QCOMPARE(model.headerData(RunTableModel::NotesColumn, Qt::Horizontal).toString(),
                 QStringLiteral("Notes"));
        QCOMPARE(text(model, 0, RunTableModel::NotesColumn),
                 QStringLiteral("8 devices on 2 cores: throughput cannot scale; "
                                "reached 0.85 at epoch 2 (20 s); reached 0.90 at epoch 3 (30 s)"));
        QCOMPARE(model.data(model.index(0, RunTableModel::NotesColumn), Qt::ToolTipRole).toString(),
                 QStringLiteral("8 devices on 2 cores: throughput cannot scale\n"
                                "reached 0.85 at epoch 2 (20 s)\nreached 0.90 at epoch 3 (30 s)"));
        QCOMPARE(
            model.data(model.index(0, RunTableModel::NotesColumn), Qt::TextAlignmentRole).toInt(),
            int(Qt::AlignLeft | Qt::AlignVCenter));
        QCOMPARE(text(model, 1, RunTableModel::NotesColumn), QString());
    }

    // The views hear of the notes changing: what a view reads when told, as the run diverges.
    void notes_follow_the_run_as_it_ends() {
        RunController controller;
        RunCollection runs(controller);
        RunTableModel model(runs);
        RunSpec spec = short_synthetic_run();
        spec.lr = 1e6;
        const int id = runs.start(spec);
        QCOMPARE(text(model, 0, RunTableModel::NotesColumn), QString());
        QString told;
        connect(&model, &QAbstractItemModel::dataChanged, this,
                [&](const QModelIndex& top_left, const QModelIndex& bottom_right) {
                    if (top_left.column() <= RunTableModel::NotesColumn &&
                        bottom_right.column() >= RunTableModel::NotesColumn)
                        told = text(model, 0, RunTableModel::NotesColumn);
                });

        QTRY_VERIFY_WITH_TIMEOUT(told.startsWith(QStringLiteral("diverged")), 30000);
        QCOMPARE(runs.find(id)->state, RunState::Diverged);
        QCOMPARE(told, QStringLiteral("diverged at step %1 (loss NaN) – LR 1e+06, no warm-up")
                           .arg(runs.find(id)->step));
    }

    // Repeats: a group is one row, its runs its children; plain runs stay plain rows.
    void a_group_is_one_row_with_its_runs_under_it() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(1), "alone", 1000, {0.8}));
        const std::vector<int> members = {
            runs.add(grouped(fixture_run(fixture_spec(2), "wide (seed 1)", 1000, {0.895}), "g", 1)),
            runs.add(grouped(fixture_run(fixture_spec(2), "wide (seed 2)", 1000, {0.899}), "g", 2)),
            runs.add(grouped(
                fixture_run(fixture_spec(2), "wide (seed 3)", 1000, {0.2}, RunState::Diverged), "g",
                3))};
        RunTableModel model(runs);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        runs.add(fixture_run(fixture_spec(1), "after", 1000, {0.8}));

        QCOMPARE(model.rowCount(), 3);
        const QModelIndex group = model.index(1, RunTableModel::NameColumn);
        QCOMPARE(model.runId(group), 0);
        QCOMPARE(group.data(RunTableModel::GroupRole).toString(), QStringLiteral("g"));
        QCOMPARE(group.data(RunTableModel::RunIdsRole).value<QList<int>>(),
                 QList<int>(members.begin(), members.end()));
        QCOMPARE(group.data().toString(), QStringLiteral("wide · seeds 1–3"));
        QCOMPARE(model.rowCount(group), 3);
        for (int member = 0; member < 3; ++member) {
            const QModelIndex child = model.index(member, 0, group);
            QCOMPARE(model.runId(child), members[std::size_t(member)]);
            QCOMPARE(child.parent(), group);
            QCOMPARE(model.indexOfRun(members[std::size_t(member)]), child);
        }
        // The diverged run is counted and shown, never dropped.
        QCOMPARE(text(model, 1, RunTableModel::StatusColumn),
                 QStringLiteral("3 runs: 2 finished, 1 diverged"));
        QCOMPARE(RunState(group.data(RunTableModel::StateRole).toInt()), RunState::Diverged);
        QCOMPARE(text(model, 1, RunTableModel::BestAccuracyColumn),
                 QStringLiteral("0.665 ± 0.402"));
        QCOMPARE(text(model, 1, RunTableModel::ImagesPerSecondColumn), QStringLiteral("1000 ± 0"));
        QCOMPARE(model.data(model.index(0, 1, group)).toString(), QString());

        // A group leaves with its last run.
        QVERIFY(runs.remove(members[0]));
        QCOMPARE(model.rowCount(group), 2);
        QVERIFY(runs.remove(members[1]));
        QVERIFY(runs.remove(members[2]));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(text(model, 1, RunTableModel::NameColumn), QStringLiteral("after"));
    }

    void a_groups_check_box_shows_and_hides_all_its_runs() {
        RunController controller;
        RunCollection runs(controller);
        const int a = runs.add(grouped(fixture_run(fixture_spec(1), "a", 1000, {0.8}), "g", 1));
        const int b = runs.add(grouped(fixture_run(fixture_spec(1), "b", 1000, {0.8}), "g", 2));
        RunTableModel model(runs);
        const QModelIndex group = model.index(0, RunTableModel::NameColumn);
        QVERIFY(model.flags(group) & Qt::ItemIsUserCheckable);
        QVERIFY(!(model.flags(group) & Qt::ItemIsEditable));
        QCOMPARE(group.data(Qt::CheckStateRole).toInt(), int(Qt::Checked));
        runs.setVisible(b, false);
        QCOMPARE(group.data(Qt::CheckStateRole).toInt(), int(Qt::PartiallyChecked));
        QVERIFY(model.setData(group, int(Qt::Unchecked), Qt::CheckStateRole));
        QVERIFY(!runs.find(a)->visible && !runs.find(b)->visible);
        QVERIFY(model.setData(group, int(Qt::Checked), Qt::CheckStateRole));
        QVERIFY(runs.find(a)->visible && runs.find(b)->visible);
    }

    void a_groups_notes_say_when_it_is_within_seed_noise() {
        RunController controller;
        RunCollection runs(controller);
        const auto add_group = [&](const QString& group, const std::vector<double>& accuracies) {
            for (std::size_t i = 0; i < accuracies.size(); ++i)
                runs.add(grouped(fixture_run(fixture_spec(1), group, 1000, {accuracies[i]}), group,
                                 i + 1));
        };
        add_group("near", {0.895, 0.897, 0.899, 0.894, 0.900});
        add_group("best", {0.899, 0.901, 0.897, 0.900, 0.898});
        add_group("far", {0.80, 0.81, 0.79});
        RunTableModel model(runs);
        // Each is compared with the best other group: "near" with "best", "best" with "near".
        QVERIFY2(text(model, 0, RunTableModel::NotesColumn)
                     .startsWith(QStringLiteral("within seed noise: best val acc 0.897 ± 0.003 "
                                                "against 0.899 ± 0.002 (Welch's t-test, p = 0.")),
                 qPrintable(text(model, 0, RunTableModel::NotesColumn)));
        QVERIFY(text(model, 1, RunTableModel::NotesColumn).startsWith("within seed noise"));
        QCOMPARE(text(model, 2, RunTableModel::NotesColumn), QString());
        QVERIFY(tip(model, 2, RunTableModel::NotesColumn).contains(QStringLiteral("“best")));

        // With the baseline in "far", everything is compared with "far": a real difference.
        runs.setBaseline(runs.ids().back());
        QCOMPARE(text(model, 0, RunTableModel::NotesColumn), QString());
    }

    void a_members_change_reaches_its_groups_row() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(2), "alone", 1000, {0.8}));
        const int member =
            runs.add(grouped(fixture_run(fixture_spec(2), "a", 1000, {0.8}), "g", 1));
        RunTableModel model(runs);
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        emit runs.runChanged(member);
        QTRY_VERIFY_WITH_TIMEOUT(changed.count() >= 2, 2000);
        bool group_row = false;
        bool member_row = false;
        for (const QList<QVariant>& signal : changed) {
            const auto top_left = signal.at(0).value<QModelIndex>();
            const auto bottom_right = signal.at(1).value<QModelIndex>();
            group_row |=
                !top_left.parent().isValid() && top_left.row() <= 1 && bottom_right.row() >= 1;
            member_row |= top_left.parent().isValid() && model.runId(top_left) == member;
        }
        QVERIFY(group_row);
        QVERIFY(member_row);
    }
};

QTEST_MAIN(TestRunTableModel)
#include "test_run_table_model.moc"
