// Queueing a lesson (queue_lesson(), which `scalelab-cli lesson run` and the window's Run lesson
// share): each lesson run's repeats one group over consecutive seeds, named by seed, in lesson
// order; a lesson run without repeats one run outside any group.

#include <QtTest>

#include <set>
#include <vector>

#include "lesson_queue.h"
#include "run_collection.h"
#include "run_controller.h"
#include "short_runs.h"

using namespace scalelab;
using scalelab::testing::short_synthetic_run;

namespace {

Lesson lesson_with_repeats(int first_repeats, int second_repeats) {
    RunSpec spec = short_synthetic_run();
    spec.seed = 7;
    Lesson lesson;
    lesson.title = QStringLiteral("Repeats");
    lesson.runs = {{QStringLiteral("small"), spec, first_repeats},
                   {QStringLiteral("large"), spec, second_repeats}};
    lesson.runs[1].spec.batch = 64;
    return lesson;
}

bool all_ended(const RunCollection& runs, const std::vector<int>& ids) {
    for (const int id : ids)
        if (is_active(runs.find(id)->state))
            return false;
    return true;
}

}  // namespace

class TestLessonQueue : public QObject {
    Q_OBJECT

  private slots:
    void eachLessonRunsRepeatsAreOneGroupOverItsSeeds() {
        RunController controller;
        RunCollection runs(controller);
        const LessonRunIds ids =
            queue_lesson(runs, lesson_with_repeats(3, 1), QStringLiteral("Repeats: "));
        QCOMPARE(ids.size(), std::size_t{2});
        QCOMPARE(ids[0].size(), std::size_t{3});
        QCOMPARE(ids[1].size(), std::size_t{1});
        // In lesson order, one after another.
        QCOMPARE(runs.ids(), all_runs(ids));

        const QString group = runs.find(ids[0][0])->group;
        QVERIFY(!group.isEmpty());
        for (std::size_t i = 0; i < ids[0].size(); ++i) {
            const RunRecord* member = runs.find(ids[0][i]);
            QCOMPARE(member->group, group);
            QCOMPARE(member->spec.seed, std::uint64_t(7 + i));
            QCOMPARE(member->spec.batch, 32);
            QCOMPARE(member->name, QStringLiteral("Repeats: small (seed %1)").arg(7 + i));
        }
        const RunRecord* single = runs.find(ids[1][0]);
        QVERIFY(single->group.isEmpty());
        QCOMPARE(single->name, QStringLiteral("Repeats: large"));
        QCOMPARE(single->spec.seed, std::uint64_t(7));
        QCOMPARE(single->spec.batch, 64);
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(runs, all_runs(ids)), 120000);
    }

    void eachQueueingMakesNewGroupsAndTheSeedCanBeReplaced() {
        RunController controller;
        RunCollection runs(controller);
        const Lesson lesson = lesson_with_repeats(2, 2);
        const LessonRunIds first = queue_lesson(runs, lesson, {}, 100);
        const LessonRunIds again = queue_lesson(runs, lesson);
        std::set<QString> groups;
        for (const LessonRunIds& ids : {first, again})
            for (const std::vector<int>& members : ids)
                groups.insert(runs.find(members.front())->group);
        QCOMPARE(groups.size(), std::size_t{4});  // a sweep's points are different experiments
        QCOMPARE(runs.find(first[1][0])->spec.seed, std::uint64_t(100));
        QCOMPARE(runs.find(first[1][1])->spec.seed, std::uint64_t(101));
        QCOMPARE(runs.find(first[1][1])->name, QStringLiteral("large (seed 101)"));
        QCOMPARE(runs.find(again[0][1])->spec.seed, std::uint64_t(8));
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(runs, runs.ids()), 120000);
    }
};

QTEST_GUILESS_MAIN(TestLessonQueue)
#include "test_lesson_queue.moc"
