// Lessons in the window: every shipped lesson, at test size (synthetic data), opened from the
// library and run with one press; its runs end, and the charts and views it names receive their
// series. Also: a lesson file with a problem is refused with its file and line, the lesson shown
// before stays, and the panel judges the assessment.

#include <QDir>
#include <QFile>
#include <QLabel>
#include <QTemporaryDir>
#include <QTreeWidget>
#include <QtTest>

#include "../app/run_fixtures.h"
#include "chart_grid.h"
#include "lesson_library.h"
#include "lesson_panel.h"
#include "scaling_view.h"
#include "steps_to_target_view.h"
#include "time_breakdown_view.h"
#include "window_test_support.h"

using namespace scalelab;
using namespace scalelab::testing;

namespace {

std::optional<ChartKind> grid_chart(LessonChart chart) {
    switch (chart) {
        case LessonChart::TrainLoss:
            return ChartKind::TrainLoss;
        case LessonChart::ValAccuracy:
            return ChartKind::ValAccuracy;
        case LessonChart::ImagesPerSecond:
            return ChartKind::ImagesPerSecond;
        case LessonChart::LearningRate:
            return ChartKind::LearningRate;
        case LessonChart::NoiseScale:
            return ChartKind::NoiseScale;
        case LessonChart::Scaling:
        case LessonChart::StepsToTarget:
        case LessonChart::TimeBreakdown:
            return std::nullopt;
    }
    return std::nullopt;
}

bool all_ended(const RunCollection& runs, const std::vector<int>& ids) {
    return std::all_of(ids.begin(), ids.end(), [&](int id) {
        const RunRecord* run = runs.find(id);
        return run != nullptr && !is_active(run->state);
    });
}

}  // namespace

class TestLessonWindow : public QObject {
    Q_OBJECT

  private slots:
    void everyShippedLessonRunsAndFillsItsCharts_data() {
        QTest::addColumn<QString>("file");
        const std::vector<LessonEntry> entries =
            list_lessons(two_cpu_cores(), LessonSize::Test, {shipped_lessons_folder()});
        QVERIFY(entries.size() >= 8);
        for (const LessonEntry& entry : entries)
            QTest::newRow(qPrintable(QFileInfo(entry.file).fileName())) << entry.file;
    }

    void everyShippedLessonRunsAndFillsItsCharts() {
        QFETCH(QString, file);
        const LessonEntry entry = load_lesson_file(file, two_cpu_cores(), LessonSize::Test);
        QVERIFY2(entry.lesson.has_value(), qPrintable(entry.error));
        const Lesson& lesson = *entry.lesson;

        WindowUnderTest w;
        w.window.openLesson(lesson);
        QVERIFY(!w.window.lessonPanel().isHidden());
        QCOMPARE(w.window.findChild<QLabel*>(QStringLiteral("lessonTitle"))->text(), lesson.title);
        // Each lesson run under its own name; its seeds, before it runs, with its state.
        const auto* list = w.window.findChild<QTreeWidget*>(QStringLiteral("lessonRuns"));
        QVERIFY(list);
        for (int row = 0; row < list->topLevelItemCount(); ++row) {
            const LessonRun& run = lesson.runs[std::size_t(row)];
            QCOMPARE(list->topLevelItem(row)->text(0), run.name);
            QCOMPARE(list->topLevelItem(row)->text(1),
                     run.repeats > 1 ? QStringLiteral("not started, %1 seeds").arg(run.repeats)
                                     : QStringLiteral("not started"));
        }

        const std::vector<int> ids = w.window.runLesson();
        std::size_t queued = 0;
        for (const LessonRun& run : lesson.runs)
            queued += std::size_t(run.repeats);
        QCOMPARE(ids.size(), queued);
        // One line per lesson run; one group of its repeats each.
        QCOMPARE(w.window.lessonPanel().runIds().size(), lesson.runs.size());
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(w.runs, ids), 120000);
        for (const int id : ids) {
            const RunRecord* run = w.runs.find(id);
            QVERIFY2(run->state != RunState::Failed && run->state != RunState::Cancelled,
                     qPrintable(run->name + QStringLiteral(": ") + run->message));
            QVERIFY(run->tags.contains(lesson.title));
        }

        w.window.charts().redrawNow();
        w.window.scaling().redrawNow();
        w.window.stepsToTarget().redrawNow();
        w.window.timeBreakdown().redrawNow();
        w.window.lessonPanel().refreshNow();
        for (const LessonChart chart : lesson.charts) {
            if (const std::optional<ChartKind> kind = grid_chart(chart)) {
                const auto& shown = w.window.charts().shownCharts();
                QVERIFY(std::find(shown.begin(), shown.end(), *kind) != shown.end());
                // A lesson run with repeats is drawn as its group's mean.
                for (const int id : ids) {
                    const QString& group = w.runs.find(id)->group;
                    QVERIFY2(w.window.charts().chart(*kind).hasSeries(
                                 group.isEmpty() ? ChartGrid::seriesKey(id, SeriesPart::Curve)
                                                 : ChartGrid::groupKey(group, GroupPart::Mean)),
                             qPrintable(ChartGrid::title(*kind) + QStringLiteral(" lacks ") +
                                        w.runs.find(id)->name));
                }
            } else if (chart == LessonChart::Scaling) {
                QVERIFY2(!w.window.scaling().groups().empty(),
                         "a scaling lesson needs runs that differ only in their device count");
            } else if (chart == LessonChart::TimeBreakdown) {
                const int shown = w.window.timeBreakdown().runId();
                QVERIFY(std::find(ids.begin(), ids.end(), shown) != ids.end());
                QCOMPARE(int(w.window.timeBreakdown().shownBreakdown().devices.size()),
                         w.runs.find(shown)->spec.devices);
            } else if (chart == LessonChart::StepsToTarget) {
                // Every run either has its point on the chart, alone or in its group's mean, or
                // is listed as not reaching the target (on a few hundred synthetic images, many
                // runs do not).
                const StepsToTarget& shown = w.window.stepsToTarget().shown();
                QCOMPARE(int(shown.reached.size() + shown.not_reached.size()), int(ids.size()));
                const auto& steps_chart = w.window.stepsToTarget().stepsChart();
                for (const StepsToTargetPoint& point : shown.reached) {
                    const QString& group = w.runs.find(point.run_id)->group;
                    QVERIFY(steps_chart.hasSeries(StepsToTargetView::runKey(point.run_id)) ||
                            (!group.isEmpty() &&
                             steps_chart.hasSeries(StepsToTargetView::groupKey(group))));
                }
            }
        }
        // Every claim is judged once the runs end (on synthetic data many do not hold, and
        // say so), and the panel lists each one.
        const std::vector<ClaimVerdict> verdicts = w.window.lessonPanel().claimVerdicts();
        QCOMPARE(verdicts.size(), lesson.claims.size());
        const QString claims_text =
            w.window.findChild<QLabel*>(QStringLiteral("lessonClaims"))->text();
        for (std::size_t i = 0; i < verdicts.size(); ++i) {
            QVERIFY2(verdicts[i].outcome != ClaimOutcome::Pending, qPrintable(verdicts[i].text));
            QVERIFY(claims_text.contains(lesson.claims[i].text.toHtmlEscaped()));
        }
        for (std::size_t row = 0; row < lesson.runs.size(); ++row) {
            const std::vector<int>& members = w.window.lessonPanel().runIds()[row];
            QCOMPARE(int(members.size()), lesson.runs[row].repeats);
            if (members.size() > 1) {
                QVERIFY(!w.runs.find(members.front())->group.isEmpty());
                // Every member ended (finished, or diverged where the lesson shows that).
                const QString state = w.window.lessonPanel().stateText(int(row));
                QVERIFY2(state.startsWith(QStringLiteral("%1 runs: ").arg(members.size())) &&
                             !state.contains(QStringLiteral("running")),
                         qPrintable(state));
            }
        }
        if (lesson.assessment)
            for (int row = 0; row < int(lesson.runs.size()); ++row) {
                const QString result = w.window.lessonPanel().resultText(row);
                QVERIFY2(result.startsWith(QStringLiteral("passed")) ||
                             result.startsWith(QStringLiteral("failed")),
                         qPrintable(result));
            }
    }

    void closingALessonShowsTheRunsItsRunHid() {
        WindowUnderTest w;
        const int earlier = w.runs.add(fixture_run(fixture_spec(1), "earlier", 1000, {0.8}));
        const LessonEntry entry = load_lesson_file(
            shipped_lessons_folder() + QStringLiteral("/01-batch-size-throughput.json"),
            two_cpu_cores(), LessonSize::Test);
        QVERIFY2(entry.lesson.has_value(), qPrintable(entry.error));
        w.window.openLesson(*entry.lesson);
        const std::vector<int> ids = w.window.runLesson();
        QVERIFY(!w.runs.find(earlier)->visible);
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(w.runs, ids), 120000);
        w.window.closeLesson();
        QVERIFY(w.runs.find(earlier)->visible);
        QVERIFY(w.runs.find(ids.front())->visible);
    }

    void brokenLessonFileIsRefusedWithFileAndLine() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("mine.json"));
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(
            "{\n  \"title\": \"Mine\",\n  \"explanation\": \"x\",\n  \"runs\": [\n"
            "    {\"name\": \"a\", \"modle\": \"cnn\"}\n  ]\n}\n");
        out.close();

        WindowUnderTest w;
        const std::vector<LessonEntry> shipped =
            list_lessons(two_cpu_cores(), LessonSize::Test, {shipped_lessons_folder()});
        w.window.openLesson(*shipped.front().lesson);
        QString error;
        QVERIFY(!w.window.openLessonFile(path, &error));
        QVERIFY2(error.contains(QStringLiteral("mine.json:5")) &&
                     error.contains(QStringLiteral("modle")),
                 qPrintable(error));
        QCOMPARE(w.window.lessonPanel().lesson()->title, shipped.front().lesson->title);
    }
};

QTEST_MAIN(TestLessonWindow)
#include "test_lesson_window.moc"
