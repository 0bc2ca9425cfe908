#include <QtTest>

#include <utility>
#include <vector>

#include "steps_to_target.h"

using scalelab::Metric;
using scalelab::MetricPoint;
using scalelab::RunRecord;
using scalelab::StepsToTarget;
using scalelab::StepsToTargetPoint;
using scalelab::TargetReached;

namespace {

// A started run of global batch `batch` whose validation accuracy was `accuracy` at the end of
// each epoch of `steps_per_epoch` steps, recording `targets` as reached.
RunRecord run_of(int id, int batch, const std::vector<double>& accuracy, int steps_per_epoch,
                 std::vector<TargetReached> targets = {}) {
    RunRecord run;
    run.id = id;
    run.started = true;
    run.info.global_batch = batch;
    run.info.steps_per_epoch = steps_per_epoch;
    for (int epoch = 1; epoch <= int(accuracy.size()); ++epoch) {
        const std::int64_t step = std::int64_t(epoch) * steps_per_epoch;
        run.curve(Metric::ValAccuracy)
            .push_back(MetricPoint{.step = step,
                                   .epoch = epoch,
                                   .samples = double(step) * batch,
                                   .seconds = double(epoch),
                                   .value = accuracy[std::size_t(epoch - 1)]});
    }
    run.targets = std::move(targets);
    return run;
}

TargetReached reached(double target, std::int64_t step, double images) {
    return TargetReached{
        .target = target, .seconds = 1.0, .step = step, .epoch = 1, .images = images};
}

std::vector<const RunRecord*> pointers(const std::vector<RunRecord>& runs) {
    std::vector<const RunRecord*> result;
    for (const RunRecord& run : runs)
        result.push_back(&run);
    return result;
}

std::vector<int> ids_of(const StepsToTarget& result) {
    std::vector<int> ids;
    for (const StepsToTargetPoint& point : result.reached)
        ids.push_back(point.run_id);
    return ids;
}

}  // namespace

class TestStepsToTarget : public QObject {
    Q_OBJECT

  private slots:
    void recordedTargetsGiveTheStepsAndImages() {
        // Recorded targets that the curves (all below 0.9) would not give.
        const std::vector<RunRecord> runs = {
            run_of(1, 64, {0.5}, 100, {reached(0.85, 300, 19200.0), reached(0.9, 400, 25600.0)}),
            run_of(2, 256, {0.5}, 100, {reached(0.9, 120, 30720.0)}),
            run_of(3, 128, {0.5}, 100, {reached(0.9, 210, 26880.0)}),
        };
        const StepsToTarget result = scalelab::steps_to_target(pointers(runs), 0.9);
        QCOMPARE(result.target, 0.9);
        QCOMPARE(ids_of(result), std::vector<int>({1, 3, 2}));  // by global batch
        QCOMPARE(result.reached[0].global_batch, 64);
        QCOMPARE(result.reached[0].steps, std::int64_t(400));
        QCOMPARE(result.reached[0].images, 25600.0);
        QCOMPARE(result.reached[1].steps, std::int64_t(210));
        QCOMPARE(result.reached[2].images, 30720.0);
        QVERIFY(result.not_reached.empty());
        // 400 steps × 64 = 25600 images of work: 200 steps at 128, 100 at 256.
        QCOMPARE(result.perfect_scaling,
                 (std::vector<std::pair<int, double>>{{64, 400.0}, {128, 200.0}, {256, 100.0}}));

        const StepsToTarget lower = scalelab::steps_to_target(pointers(runs), 0.85);
        QCOMPARE(ids_of(lower), std::vector<int>({1}));
        QCOMPARE(lower.reached[0].steps, std::int64_t(300));
        QCOMPARE(lower.not_reached, std::vector<int>({2, 3}));
    }

    void aTargetNotRecordedIsFoundInTheCurve() {
        // Epochs end at steps 30, 60, 90: 0.91 at step 90 is the first at or above 0.9.
        const std::vector<RunRecord> runs = {
            run_of(7, 512, {0.80, 0.88, 0.91, 0.95}, 30, {reached(0.85, 60, 30720.0)})};
        const StepsToTarget result = scalelab::steps_to_target(pointers(runs), 0.9);
        QCOMPARE(ids_of(result), std::vector<int>({7}));
        QCOMPARE(result.reached[0].steps, std::int64_t(90));
        QCOMPARE(result.reached[0].images, 90.0 * 512);
        QCOMPARE(result.perfect_scaling, (std::vector<std::pair<int, double>>{{512, 90.0}}));

        // Reached exactly at the target.
        const StepsToTarget exact = scalelab::steps_to_target(pointers(runs), 0.88);
        QCOMPARE(exact.reached[0].steps, std::int64_t(60));
    }

    void runsThatNeverReachItAreListed() {
        std::vector<RunRecord> runs = {
            run_of(1, 64, {0.7, 0.95}, 50), run_of(2, 128, {0.7, 0.87, 0.89}, 25),
            run_of(3, 256, {}, 10),  // started, not yet evaluated
        };
        const StepsToTarget result = scalelab::steps_to_target(pointers(runs), 0.9);
        QCOMPARE(ids_of(result), std::vector<int>({1}));
        QCOMPARE(result.reached[0].steps, std::int64_t(100));
        QCOMPARE(result.not_reached, std::vector<int>({2, 3}));
    }

    void runsNotStartedAreIgnored() {
        std::vector<RunRecord> runs = {run_of(1, 64, {0.95}, 50), run_of(2, 128, {0.95}, 25),
                                       run_of(3, 128, {}, 25)};
        runs[1].started = false;
        runs[2].started = false;
        std::vector<const RunRecord*> given = pointers(runs);
        given.push_back(nullptr);
        const StepsToTarget result = scalelab::steps_to_target(given, 0.9);
        QCOMPARE(ids_of(result), std::vector<int>({1}));
        QVERIFY(result.not_reached.empty());
    }

    void theFewestStepsAtTheSmallestBatchAreTheReference() {
        const std::vector<RunRecord> runs = {
            run_of(1, 64, {0.5, 0.95}, 200),  // 400 steps
            run_of(2, 64, {0.95}, 380),       // 380 steps
            run_of(3, 190, {0.95}, 100),
        };
        const StepsToTarget result = scalelab::steps_to_target(pointers(runs), 0.9);
        QCOMPARE(ids_of(result), std::vector<int>({2, 1, 3}));
        // One line point per batch: 380 × 64 / 190 = 128 steps at 190.
        QCOMPARE(result.perfect_scaling,
                 (std::vector<std::pair<int, double>>{{64, 380.0}, {190, 128.0}}));
    }

    void noRunsNoPoints() {
        const StepsToTarget result = scalelab::steps_to_target({}, 0.9);
        QCOMPARE(result.target, 0.9);
        QVERIFY(result.reached.empty());
        QVERIFY(result.not_reached.empty());
        QVERIFY(result.perfect_scaling.empty());
    }
};

QTEST_MAIN(TestStepsToTarget)
#include "test_steps_to_target.moc"
