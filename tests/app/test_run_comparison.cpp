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
using scalelab::testing::with_threads;

class TestRunComparison : public QObject {
    Q_OBJECT

  private slots:
    void devices_threads_and_seed_are_the_only_differences_allowed() {
        RunSpec two = fixture_spec(2);
        RunSpec four = fixture_spec(4);
        four.threads = 3;
        four.seed = 7;  // speed does not depend on it
        QVERIFY(scalelab::differs_only_in_devices(two, four));
        QVERIFY(scalelab::differs_only_in_devices(two, two));

        RunSpec other_lr = fixture_spec(4, 0.2);
        QVERIFY(!scalelab::differs_only_in_devices(two, other_lr));
        RunSpec other_batch = fixture_spec(4);
        other_batch.batch = 64;
        QVERIFY(!scalelab::differs_only_in_devices(two, other_batch));
        RunSpec other_momentum = fixture_spec(2);
        other_momentum.momentum = 0.5;
        QVERIFY(!scalelab::differs_only_in_devices(two, other_momentum));
    }

    void efficiency_is_measured_against_the_one_device_run() {
        RunController controller;
        RunCollection runs(controller);
        const int one = runs.add(fixture_run(fixture_spec(1), "1", 1000, {0.8}));
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        const int four = runs.add(fixture_run(fixture_spec(4), "4", 3400, {0.8}));
        const int other = runs.add(fixture_run(fixture_spec(2, 0.3), "other lr", 1900, {0.8}));

        // 1800 / (2 × 1000) and 3400 / (4 × 1000).
        const auto at_two = scalelab::scaling_efficiency(runs, two);
        QCOMPARE(at_two->value.value(), 0.9);
        QCOMPARE(at_two->baseline_id, one);
        QCOMPARE(at_two->ideal_images_per_s, 2000.0);
        QVERIFY(!at_two->same_total_cores);
        QCOMPARE(at_two->explanation,
                 QStringLiteral("1,800 images/s against 2 × 1,000 of “1” (1 device × 1 thread)"));
        QCOMPARE(scalelab::scaling_efficiency(runs, four)->value.value(), 0.85);
        QVERIFY(!scalelab::scaling_efficiency(runs, one));  // the reference itself
        QVERIFY(!scalelab::scaling_efficiency(runs, 99));   // no such run
        // No 1-device run of its kind: no value, and why.
        const auto alone = scalelab::scaling_efficiency(runs, other);
        QVERIFY(!alone->value);
        QCOMPARE(alone->baseline_id, 0);
        QCOMPARE(alone->explanation,
                 QStringLiteral("no 1-device run to compare with: run the same configuration on "
                                "1 device × 1 thread"));
    }

    void the_baseline_is_the_chosen_or_the_latest_shown_run_never_an_average() {
        RunController controller;
        RunCollection runs(controller);
        const int a = runs.add(fixture_run(fixture_spec(1), "a", 1000, {0.8}));
        const int b = runs.add(fixture_run(fixture_spec(1), "b", 1200, {0.8}));
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1980, {0.8}));
        // The latest: 1980 / (2 × 1200).
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->baseline_id, b);
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->value.value(), 0.825);
        // The one the user chose: 1980 / (2 × 1000).
        runs.setBaseline(a);
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->value.value(), 0.99);
        // A chosen baseline that does not match is passed over.
        runs.setBaseline(two);
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->baseline_id, b);
        // Hidden runs are not compared with; the message says which to show.
        runs.setVisible(b, false);
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->baseline_id, a);
        runs.setVisible(a, false);
        const auto none = scalelab::scaling_efficiency(runs, two);
        QVERIFY(!none->value);
        QVERIFY2(none->explanation.endsWith(QStringLiteral(", or show “b” on the charts")),
                 qPrintable(none->explanation));
    }

    void a_disturbed_run_is_the_baseline_only_when_every_one_was() {
        RunController controller;
        RunCollection runs(controller);
        const int calm = runs.add(fixture_run(fixture_spec(1), "calm", 1000, {0.8}));
        RunRecord busy = fixture_run(fixture_spec(1), "busy", 500, {0.8});
        busy.epochs.back().other_programs_share = 0.5;
        const int busy_id = runs.add(busy);
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->baseline_id, calm);
        runs.setVisible(calm, false);
        const auto only_busy = scalelab::scaling_efficiency(runs, two);
        QCOMPARE(only_busy->baseline_id, busy_id);
        QVERIFY2(only_busy->explanation.endsWith(
                     QStringLiteral("; other programs used 50% of the cores during “busy”, so "
                                    "this figure may be too high")),
                 qPrintable(only_busy->explanation));
        // The Scaling tab leaves the disturbed run out of the 1-device point while a calm one
        // is shown.
        runs.setVisible(calm, true);
        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.front().points.front().run_ids, std::vector<int>{calm});
        QVERIFY(!groups.front().points.front().disturbed);
    }

    void only_runs_with_the_same_threads_per_device_compare() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(with_threads(fixture_run(fixture_spec(1), "1 × 2 threads", 1500, {0.8}), 2));
        const int two = runs.add(fixture_run(fixture_spec(2), "2 × 1 thread", 1800, {0.8}));
        QVERIFY(!scalelab::scaling_efficiency(runs, two)->value);
        // The same threads on a machine of another size is another machine.
        RunRecord bigger = fixture_run(fixture_spec(1), "on 8 cores", 1000, {0.8});
        bigger.info.cores = 8;
        runs.add(bigger);
        QVERIFY(!scalelab::scaling_efficiency(runs, two)->value);
        const int one = runs.add(fixture_run(fixture_spec(1), "1 × 1 thread", 1000, {0.8}));
        QCOMPARE(scalelab::scaling_efficiency(runs, two)->baseline_id, one);
    }

    void devices_sharing_all_cores_compare_with_one_device_on_the_same_cores() {
        RunController controller;
        RunCollection runs(controller);
        RunSpec shared_spec = fixture_spec(2);
        shared_spec.threads = 0;
        RunRecord shared = fixture_run(shared_spec, "2 sharing 2 cores", 1800, {0.8});
        shared.info.threads_per_device = 1;  // 2 cores / 2 devices
        const int two = runs.add(shared);
        runs.add(fixture_run(fixture_spec(1), "1 × 1 thread", 1000, {0.8}));
        const auto without = scalelab::scaling_efficiency(runs, two);
        QVERIFY(!without->value);
        QVERIFY(without->same_total_cores);
        QCOMPARE(without->explanation,
                 QStringLiteral("no 1-device run to compare with: run the same configuration on "
                                "1 device × 2 threads (the same cores in total)"));

        RunSpec all_cores = fixture_spec(1);
        all_cores.threads = 0;
        RunRecord one = fixture_run(all_cores, "1 on 2 cores", 2000, {0.8});
        one.info.threads_per_device = 2;
        const int one_id = runs.add(one);
        // The devices divide the same cores: the ideal is the 1-device run itself.
        const auto with = scalelab::scaling_efficiency(runs, two);
        QCOMPARE(with->baseline_id, one_id);
        QCOMPARE(with->value.value(), 0.9);
        QCOMPARE(with->ideal_images_per_s, 2000.0);
        QCOMPARE(with->explanation,
                 QStringLiteral("1,800 images/s against 2,000 of “1 on 2 cores” (1 device × 2 "
                                "threads, the same cores in total)"));
    }

    void runs_without_images_per_second_do_not_count() {
        RunController controller;
        RunCollection runs(controller);
        RunRecord queued;
        queued.spec = fixture_spec(1);
        runs.add(queued);
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        QVERIFY(!scalelab::scaling_efficiency(runs, two)->value);
        QVERIFY(scalelab::scaling_groups(runs).empty());
    }

    void groups_have_one_point_per_device_count_with_its_spread() {
        RunController controller;
        RunCollection runs(controller);
        const int eight = runs.add(fixture_run(fixture_spec(8), "8", 6400, {0.8}));
        const int two = runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        const int four = runs.add(fixture_run(fixture_spec(4), "4", 3600, {0.8}));
        const int one = runs.add(fixture_run(fixture_spec(1), "1", 900, {0.8}));
        const int one_again = runs.add(fixture_run(fixture_spec(1), "1 again", 1100, {0.8}));
        // A configuration run with one device count only makes no group.
        runs.add(fixture_run(fixture_spec(2, 0.3), "alone", 2100, {0.8}));

        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.size(), std::size_t(1));
        const ScalingGroup& group = groups.front();
        QVERIFY(group.has_baseline());
        QCOMPARE(group.points.size(), std::size_t(4));

        // The 1-device point: the mean of its repeats, and their spread.
        QCOMPARE(group.points[0].devices, 1);
        QCOMPARE(group.points[0].run_ids, (std::vector<int>{one, one_again}));
        QCOMPARE(group.points[0].images_per_s, 1000.0);
        QCOMPARE(group.points[0].min_images_per_s, 900.0);
        QCOMPARE(group.points[0].max_images_per_s, 1100.0);
        QCOMPARE(group.points[0].efficiency.value(), 1.0);
        QCOMPARE(group.points[1].devices, 2);
        QCOMPARE(group.points[1].run_ids, std::vector<int>{two});
        QCOMPARE(group.points[1].ideal_images_per_s.value(), 2000.0);
        QCOMPARE(group.points[1].efficiency.value(), 0.9);  // 1800 / (2 × 1000)
        QCOMPARE(group.points[2].run_ids, std::vector<int>{four});
        QCOMPARE(group.points[2].efficiency.value(), 0.9);  // 3600 / (4 × 1000)
        QCOMPARE(group.points[3].run_ids, std::vector<int>{eight});
        QCOMPARE(group.points[3].efficiency.value(), 0.8);  // 6400 / (8 × 1000)

        QVERIFY2(group.label.contains(QStringLiteral("128 per device")), qPrintable(group.label));
        QVERIFY2(group.label.contains(QStringLiteral("1 thread per device")),
                 qPrintable(group.label));
        QVERIFY2(!group.label.contains(QStringLiteral("×")), qPrintable(group.label));
    }

    void a_group_without_a_one_device_run_has_no_efficiency() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(2), "2", 2000, {0.8}));
        runs.add(fixture_run(fixture_spec(4), "4", 3600, {0.8}));
        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.size(), std::size_t(1));
        QVERIFY(!groups.front().has_baseline());
        for (const scalelab::ScalingPoint& point : groups.front().points)
            QVERIFY(!point.efficiency && !point.ideal_images_per_s);
    }

    void runs_with_other_threads_per_device_make_another_group() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(1), "1", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "2", 1800, {0.8}));
        runs.add(with_threads(fixture_run(fixture_spec(2), "2 × 2", 3000, {0.8}), 2));
        runs.add(with_threads(fixture_run(fixture_spec(4), "4 × 2", 5000, {0.8}), 2));
        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.size(), std::size_t(2));
        QVERIFY(groups[0].has_baseline());
        QVERIFY(!groups[1].has_baseline());  // no 1-device run with 2 threads
        QVERIFY2(groups[1].label.contains(QStringLiteral("2 threads per device")),
                 qPrintable(groups[1].label));
    }

    void groups_with_the_same_summary_get_distinct_labels() {
        RunController controller;
        RunCollection runs(controller);
        RunSpec damped_1 = fixture_spec(1);
        damped_1.momentum = 0.5;
        RunSpec damped_2 = fixture_spec(2);
        damped_2.momentum = 0.5;
        runs.add(fixture_run(fixture_spec(1), "a1", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "a2", 1900, {0.8}));
        runs.add(fixture_run(damped_1, "b1", 1000, {0.8}));
        runs.add(fixture_run(damped_2, "b2", 1800, {0.8}));

        const std::vector<ScalingGroup> groups = scalelab::scaling_groups(runs);
        QCOMPARE(groups.size(), std::size_t(2));
        QVERIFY(groups[0].label != groups[1].label);
        QCOMPARE(groups[1].points[1].efficiency.value(), 0.9);
    }
};

QTEST_MAIN(TestRunComparison)
#include "test_run_comparison.moc"
