#include <QtTest>

#include "compare_table_model.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_differences.h"
#include "run_fixtures.h"
#include "run_summary.h"
#include "run_table_model.h"

using scalelab::ComparedRuns;
using scalelab::CompareTableModel;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunTableModel;
using scalelab::ScheduleKind;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

RunRecord run_of(const RunSpec& spec, const QString& group = {}) {
    RunRecord run;
    run.spec = spec;
    run.group = group;
    return run;
}

RunSpec with_seed(RunSpec spec, std::uint64_t seed) {
    spec.seed = seed;
    return spec;
}

QStringList differing(const std::vector<RunRecord>& runs) {
    std::vector<const RunRecord*> pointers;
    for (const RunRecord& run : runs)
        pointers.push_back(&run);
    return scalelab::fields_that_differ(pointers);
}

RunSpec multistep(std::vector<int> milestones) {
    RunSpec spec = fixture_spec(1);
    spec.schedule = ScheduleKind::MultiStep;
    spec.milestones = std::move(milestones);
    return spec;
}

}  // namespace

class TestRunDifferences : public QObject {
    Q_OBJECT

  private slots:
    void theFieldsThatDifferAmongSeveralRunsComeInSpecOrder() {
        RunSpec wide = fixture_spec(1);
        wide.batch = 256;
        RunSpec fast = fixture_spec(1, 0.4);
        QCOMPARE(differing({run_of(fixture_spec(1)), run_of(fast), run_of(wide)}),
                 QStringList({QStringLiteral("batch"), QStringLiteral("lr")}));
        QCOMPARE(scalelab::fields_text(fast, {QStringLiteral("batch"), QStringLiteral("lr")}),
                 QStringLiteral("batch 128 · lr 0.4"));
    }

    void equalRunsAndARunAloneDifferInNothing() {
        QCOMPARE(differing({run_of(fixture_spec(2)), run_of(fixture_spec(2))}), QStringList());
        QCOMPARE(differing({run_of(fixture_spec(2))}), QStringList());
        QCOMPARE(differing({}), QStringList());
    }

    void theSeedDiffersBetweenRunsButNotWithinAGroup() {
        const RunSpec spec = fixture_spec(1);
        QCOMPARE(differing({run_of(with_seed(spec, 1)), run_of(with_seed(spec, 2))}),
                 QStringList({QStringLiteral("seed")}));
        QCOMPARE(differing({run_of(with_seed(spec, 1), "g"), run_of(with_seed(spec, 2), "g")}),
                 QStringList());
        // Two groups from the same first seed differ in what was chosen, not in their seeds.
        RunSpec wide = spec;
        wide.batch = 256;
        const std::vector<RunRecord> same_start = {
            run_of(with_seed(spec, 1), "a"), run_of(with_seed(spec, 2), "a"),
            run_of(with_seed(wide, 2), "b"), run_of(with_seed(wide, 1), "b")};
        QCOMPARE(differing(same_start), QStringList({QStringLiteral("batch")}));
        const std::vector<RunRecord> later_start = {run_of(with_seed(spec, 1), "a"),
                                                    run_of(with_seed(spec, 6), "b")};
        QCOMPARE(differing(later_start), QStringList({QStringLiteral("seed")}));
    }

    void listsCompareWholeAndOnlyWhereTheyApply() {
        QCOMPARE(differing({run_of(multistep({30, 60})), run_of(multistep({30, 90}))}),
                 QStringList({QStringLiteral("milestones")}));
        QCOMPARE(scalelab::fields_text(multistep({30, 60}), {QStringLiteral("milestones")}),
                 QStringLiteral("milestones 30,60"));
        // Milestones without a multi-step schedule have no effect: no difference.
        RunSpec cosine = multistep({30, 90});
        cosine.schedule = ScheduleKind::Cosine;
        RunSpec other_cosine = cosine;
        other_cosine.milestones = {10};
        QCOMPARE(differing({run_of(cosine), run_of(other_cosine)}), QStringList());
        // A field that applies to one of them differs: it says how that one decays.
        QCOMPARE(differing({run_of(cosine), run_of(multistep({30, 90}))}),
                 QStringList({QStringLiteral("schedule"), QStringLiteral("gamma"),
                              QStringLiteral("milestones"), QStringLiteral("min_lr")}));
        QCOMPARE(scalelab::fields_text(cosine,
                                       {QStringLiteral("schedule"), QStringLiteral("milestones")}),
                 QStringLiteral("schedule cosine"));
        RunSpec unmarked = fixture_spec(1);
        unmarked.targets.clear();
        QCOMPARE(differing({run_of(unmarked), run_of(fixture_spec(1))}),
                 QStringList({QStringLiteral("targets")}));
        QCOMPARE(scalelab::fields_text(unmarked, {QStringLiteral("targets")}),
                 QStringLiteral("targets none"));
    }

    void aGroupsSharedValueIsItsSeedsRange() {
        const RunSpec first = with_seed(fixture_spec(1), 1);
        const RunSpec last = with_seed(fixture_spec(1), 5);
        const scalelab::SpecField& seed = scalelab::spec_field(&RunSpec::seed);
        const scalelab::SpecField& batch = scalelab::spec_field(&RunSpec::batch);
        QCOMPARE(scalelab::shared_value_text(seed, {&last, &first}), QStringLiteral("1–5"));
        QCOMPARE(scalelab::shared_value_text(batch, {&last, &first}), QStringLiteral("128"));
        QCOMPARE(scalelab::shared_value_text(scalelab::spec_field(&RunSpec::milestones), {&first}),
                 QStringLiteral("—"));
    }

    void theConfigurationColumnShowsWhatDiffersWhileAsked() {
        RunController controller;
        RunCollection runs(controller);
        RunSpec wide = fixture_spec(1);
        wide.batch = 256;
        const int plain = runs.add(fixture_run(fixture_spec(1), "plain", 1000, {0.8}));
        const int fast = runs.add(fixture_run(fixture_spec(1, 0.4), "fast", 1000, {0.8}));
        const int broad = runs.add(fixture_run(wide, "wide", 1000, {0.8}));
        RunTableModel model(runs);
        const auto text = [&](int row, int role = Qt::DisplayRole) {
            return model.data(model.index(row, RunTableModel::ConfigurationColumn), role)
                .toString();
        };
        const QString whole = scalelab::configuration_summary(runs.find(fast)->spec);
        QCOMPARE(text(1), whole);

        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.setOnlyDifferences(true, {plain, fast, broad});
        QVERIFY(model.onlyDifferences());
        QVERIFY(!changed.isEmpty());
        QCOMPARE(text(0), QStringLiteral("batch 128 · lr 0.1"));
        QCOMPARE(text(1), QStringLiteral("batch 128 · lr 0.4"));
        QCOMPARE(text(1, Qt::ToolTipRole),
                 QStringLiteral("What differs among the runs listed:\nBatch per device (batch): "
                                "128\nLearning rate (lr): 0.4"));
        // Among the first two only the learning rate differs.
        model.setOnlyDifferences(true, {plain, fast});
        QCOMPARE(text(2), QStringLiteral("lr 0.1"));
        model.setOnlyDifferences(true, {fast});
        QCOMPARE(text(1), QStringLiteral("nothing differs"));

        model.setOnlyDifferences(false);
        QCOMPARE(text(1), whole);
        QVERIFY(text(1, Qt::ToolTipRole).startsWith(whole));
    }

    void compareShowsDifferingFieldsOverFiguresWithAGroupsSpread() {
        RunController controller;
        RunCollection runs(controller);
        RunSpec wide = fixture_spec(1);
        wide.batch = 256;
        const int alone = runs.add(fixture_run(with_seed(wide, 1), "alone", 1000, {0.80, 0.91}));
        std::vector<int> members;
        for (const double best : {0.80, 0.88, 0.90}) {
            RunRecord member =
                fixture_run(with_seed(fixture_spec(1), 1 + members.size()), "member", 2000, {best});
            member.group = QStringLiteral("repeats");
            members.push_back(runs.add(member));
        }
        CompareTableModel model(runs, {{"alone", {alone}, false}, {"repeats", members, true}});
        QCOMPARE(model.fields(), QStringList({QStringLiteral("epochs"), QStringLiteral("batch")}));
        QCOMPARE(model.columnCount(), 2);
        QCOMPARE(model.rowCount(), 2 + CompareTableModel::figure_count);
        const auto cell = [&](int row, int column) {
            return model.index(row, column).data().toString();
        };
        QCOMPARE(cell(1, 0), QStringLiteral("256"));
        QCOMPARE(cell(1, 1), QStringLiteral("128"));
        const int best = model.figureRow(CompareTableModel::Figure::BestAccuracy);
        QCOMPARE(model.headerData(best, Qt::Vertical).toString(), QStringLiteral("Best val acc"));
        QCOMPARE(cell(best, 0), QStringLiteral("0.910"));
        QCOMPARE(cell(best, 1), QStringLiteral("0.860 ± 0.053"));
        // The 0.80 member reached no mark; the others the 0.85 one, at their 10th step.
        QCOMPARE(cell(model.figureRow(CompareTableModel::Figure::StepsToTarget), 1),
                 QStringLiteral("10 ± 0 (2 of 3)"));
        // 10 steps of 128 images at 2000 images/s.
        QCOMPARE(cell(model.figureRow(CompareTableModel::Figure::TimeToTarget), 1),
                 QStringLiteral("0.85 in 0.6 ± 0.0 s (2 of 3)"));
        QCOMPARE(cell(model.figureRow(CompareTableModel::Figure::Runs), 1),
                 QStringLiteral("3 runs: 3 finished"));
        QCOMPARE(cell(model.figureRow(CompareTableModel::Figure::ImagesPerSecond), 0),
                 QStringLiteral("1000"));
        QCOMPARE(model.headerData(1, Qt::Horizontal).toString(),
                 QStringLiteral("repeats (group of 3)"));

        const QStringList csv = model.toCsv().split(QLatin1Char('\n'));
        QCOMPARE(csv.front(), QStringLiteral(",alone,repeats (group of 3)"));
        QCOMPARE(csv.at(1 + best), QStringLiteral("Best val acc,0.910,0.860 ± 0.053"));

        // A deleted run leaves; its column goes with its last run, and its differences.
        QVERIFY(runs.remove(alone));
        QCOMPARE(model.columnCount(), 1);
        QCOMPARE(model.fields(), QStringList());
    }
};

QTEST_GUILESS_MAIN(TestRunDifferences)
#include "test_run_differences.moc"
