#include <QtTest>

#include "run_collection.h"
#include "run_comparison.h"
#include "run_controller.h"
#include "run_fixtures.h"

using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunState;
using scalelab::ScalingGroup;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

class TestRunComparison : public QObject {
    Q_OBJECT

  private slots:
    void devices_and_threads_are_the_only_differences_allowed() {
        RunSpec two = fixture_spec(2);
        RunSpec four = fixture_spec(4);
        four.threads = 3;
        QVERIFY(scalelab::differs_only_in_devices(two, four));
        QVERIFY(scalelab::differs_only_in_devices(two, two));

        RunSpec other_lr = fixture_spec(4, 0.2);
        QVERIFY(!scalelab::differs_only_in_devices(two, other_lr));
        RunSpec other_batch = fixture_spec(4);
        other_batch.batch = 64;
        QVERIFY(!scalelab::differs_only_in_devices(two, other_batch));
        RunSpec other_seed = fixture_spec(2);
        other_seed.seed = 7;
        QVERIFY(!scalelab::differs_only_in_devices(two, other_seed));
    }

    void efficiency_is_measured_against_the_one_device_run() {
        RunController controller;
        RunCollection runs(controller);
        const int one = runs.add(fixture_run(fixture_spec(1), "1", 1000, {0.8}));
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        const int four = runs.add(fixture_run(fixture_spec(4), "4", 3400, {0.8}));
        const int other = runs.add(fixture_run(fixture_spec(2, 0.3), "other lr", 1900, {0.8}));

        // 1800 / (2 × 1000) and 3400 / (4 × 1000).
        QCOMPARE(scalelab::scaling_efficiency(runs, two).value(), 0.9);
        QCOMPARE(scalelab::scaling_efficiency(runs, four).value(), 0.85);
        QVERIFY(!scalelab::scaling_efficiency(runs, one));    // the reference itself
        QVERIFY(!scalelab::scaling_efficiency(runs, other));  // no 1-device run of its kind
        QVERIFY(!scalelab::scaling_efficiency(runs, 99));     // no such run
    }

    void several_one_device_runs_are_averaged() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(1), "a", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(1), "b", 1200, {0.8}));
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1980, {0.8}));
        // 1980 / (2 × 1100).
        QCOMPARE(scalelab::scaling_efficiency(runs, two).value(), 0.9);
    }

    void runs_without_images_per_second_do_not_count() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord queued;
        queued.spec = fixture_spec(1);
        runs.add(queued);
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        QVERIFY(!scalelab::scaling_efficiency(runs, two));
        QVERIFY(scalelab::scaling_groups(runs).empty());
    }

    void groups_start_the_ideal_line_at_their_smallest_device_count() {
        RunController controller;
        RunCollection runs(controller);
        const int eight = runs.add(fixture_run(fixture_spec(8), "8", 6400, {0.8}));
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 2000, {0.8}));
        const int four = runs.add(fixture_run(fixture_spec(4), "4", 3600, {0.8}));
        // A configuration run with one device count only makes no group.
        runs.add(fixture_run(fixture_spec(2, 0.3), "alone", 2100, {0.8}));

        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.size(), std::size_t(1));
        const ScalingGroup& group = groups.front();
        QCOMPARE(group.base_devices, 2);
        QCOMPARE(group.base_images_per_s, 2000.0);
        QCOMPARE(group.points.size(), std::size_t(3));

        QCOMPARE(group.points[0].devices, 2);
        QCOMPARE(group.points[0].run_id, two);
        QCOMPARE(group.points[0].efficiency, 1.0);
        QCOMPARE(group.points[1].devices, 4);
        QCOMPARE(group.points[1].run_id, four);
        QCOMPARE(group.points[1].images_per_s, 3600.0);
        QCOMPARE(group.points[1].efficiency, 0.9);  // 3600 / (2000 × 4 / 2)
        QCOMPARE(group.points[2].devices, 8);
        QCOMPARE(group.points[2].run_id, eight);
        QCOMPARE(group.points[2].efficiency, 0.8);  // 6400 / (2000 × 8 / 2)

        QCOMPARE(scalelab::ideal_images_per_s(group, 2), 2000.0);
        QCOMPARE(scalelab::ideal_images_per_s(group, 8), 8000.0);

        QVERIFY2(group.label.contains(QStringLiteral("128 per device")), qPrintable(group.label));
        QVERIFY2(!group.label.contains(QStringLiteral("×")), qPrintable(group.label));
    }

    void groups_with_the_same_summary_get_distinct_labels() {
        RunController controller;
        RunCollection runs(controller);
        RunSpec seeded_1 = fixture_spec(1);
        seeded_1.seed = 5;
        RunSpec seeded_2 = fixture_spec(2);
        seeded_2.seed = 5;
        runs.add(fixture_run(fixture_spec(1), "a1", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "a2", 1900, {0.8}));
        runs.add(fixture_run(seeded_1, "b1", 1000, {0.8}));
        runs.add(fixture_run(seeded_2, "b2", 1800, {0.8}));

        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.size(), std::size_t(2));
        QVERIFY(groups[0].label != groups[1].label);
        QCOMPARE(groups[1].points[1].efficiency, 0.9);
    }
};

QTEST_MAIN(TestRunComparison)
#include "test_run_comparison.moc"
