#include <QComboBox>
#include <QLabel>
#include <QtTest>

#include "../app/run_fixtures.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_palette.h"
#include "steps_to_target_view.h"

using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunState;
using scalelab::StepsToTargetView;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

// A run of 128 images per device on `devices` devices, 10 steps an epoch, aiming at 85% and
// 90%, with one validation accuracy per epoch.
RunRecord sweep_run(int devices, const char* name, const std::vector<double>& accuracy,
                    RunState state = RunState::Finished) {
    return fixture_run(fixture_spec(devices), name, 1000.0 * devices, accuracy, state);
}

QList<QPointF> perfect_line(StepsToTargetView& view, bool images) {
    return (images ? view.imagesChart() : view.stepsChart())
        .seriesPoints(StepsToTargetView::perfectScalingKey());
}

}  // namespace

class TestStepsToTargetView : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        controller_ = std::make_unique<RunController>();
        runs_ = std::make_unique<RunCollection>(*controller_);
        view_ = std::make_unique<StepsToTargetView>(*runs_);
        view_->resize(1200, 520);
        view_->show();
    }

    void cleanup() {
        view_.reset();
        runs_.reset();
        controller_.reset();
    }

    void drawsEachRunAndThePerfectScalingLine() {
        // 90% is first reached at the end of epoch 4 (step 40), 3 (step 30) and 2 (step 20).
        const int b128 = runs_->add(sweep_run(1, "b128", {0.7, 0.8, 0.86, 0.91}));
        const int b256 = runs_->add(sweep_run(2, "b256", {0.8, 0.88, 0.92}));
        const int b512 = runs_->add(sweep_run(4, "b512", {0.86, 0.9}));
        const int b1024 = runs_->add(sweep_run(8, "b1024", {0.8, 0.84}));
        RunRecord queued = sweep_run(16, "queued", {}, RunState::Queued);
        queued.started = false;
        runs_->add(std::move(queued));
        // Redrawn on the timer, not on every change.
        QVERIFY(view_->shown().reached.empty());
        QTRY_COMPARE(view_->shown().reached.size(), std::size_t(3));

        // The highest target reached by two runs or more.
        QCOMPARE(view_->target(), 0.9);
        const auto* selector = view_->findChild<QComboBox*>(QStringLiteral("targetSelector"));
        QVERIFY(selector != nullptr);
        QCOMPARE(selector->count(), 2);
        QCOMPARE(selector->currentText(), QStringLiteral("90%"));

        QCOMPARE(view_->stepsChart().seriesPoints(StepsToTargetView::runKey(b128)),
                 QList<QPointF>({{128.0, 40.0}}));
        QCOMPARE(view_->stepsChart().seriesPoints(StepsToTargetView::runKey(b512)),
                 QList<QPointF>({{512.0, 20.0}}));
        QCOMPARE(view_->imagesChart().seriesPoints(StepsToTargetView::runKey(b256)),
                 QList<QPointF>({{256.0, 30.0 * 256}}));
        QVERIFY(!view_->stepsChart().hasSeries(StepsToTargetView::runKey(b1024)));
        // 40 steps × 128 = 5120 images at every batch.
        QCOMPARE(perfect_line(*view_, false),
                 QList<QPointF>({{128.0, 40.0}, {256.0, 20.0}, {512.0, 10.0}}));
        QCOMPARE(perfect_line(*view_, true),
                 QList<QPointF>({{128.0, 5120.0}, {256.0, 5120.0}, {512.0, 5120.0}}));

        // Each run's point in its colour, named in the legend.
        const QString key = StepsToTargetView::runKey(b256);
        QCOMPARE(view_->stepsChart().seriesLegend(key), QStringLiteral("b256"));
        const auto style = view_->stepsChart().seriesStyle(key);
        QVERIFY(style.has_value());
        QCOMPARE(style->colour, scalelab::run_colour(runs_->find(b256)->colour));
        QVERIFY(view_->stepsChart().logX());
        QVERIFY(view_->imagesChart().logY());

        const auto* not_reached = view_->findChild<QLabel*>(QStringLiteral("notReached"));
        QVERIFY(not_reached != nullptr);
        QCOMPARE(not_reached->text(), QStringLiteral("Did not reach 90%: b1024."));
    }

    void theSelectorChangesTheTarget() {
        const int b128 = runs_->add(sweep_run(1, "b128", {0.7, 0.8, 0.86, 0.91}));
        runs_->add(sweep_run(2, "b256", {0.8, 0.88, 0.92}));
        const int b512 = runs_->add(sweep_run(4, "b512", {0.86, 0.9}));
        view_->redrawNow();
        QCOMPARE(view_->target(), 0.9);

        auto* selector = view_->findChild<QComboBox*>(QStringLiteral("targetSelector"));
        QTest::keyClick(selector, Qt::Key_Up);
        QCOMPARE(view_->target(), 0.85);
        QCOMPARE(view_->stepsChart().seriesPoints(StepsToTargetView::runKey(b128)),
                 QList<QPointF>({{128.0, 30.0}}));
        QCOMPARE(view_->stepsChart().seriesPoints(StepsToTargetView::runKey(b512)),
                 QList<QPointF>({{512.0, 10.0}}));
        // 30 steps × 128 = 3840 images: 15 steps at 256, 7.5 at 512.
        QCOMPARE(perfect_line(*view_, false),
                 QList<QPointF>({{128.0, 30.0}, {256.0, 15.0}, {512.0, 7.5}}));
        const auto* not_reached = view_->findChild<QLabel*>(QStringLiteral("notReached"));
        QCOMPARE(not_reached->text(), QStringLiteral("Every shown run reached 85%."));
    }

    void aTargetNoRunRecordsIsFoundInTheCurves() {
        const int b128 = runs_->add(sweep_run(1, "b128", {0.7, 0.8, 0.86, 0.91}));
        const int b256 = runs_->add(sweep_run(2, "b256", {0.8, 0.88, 0.92}));
        const int b512 = runs_->add(sweep_run(4, "b512", {0.7, 0.75}, RunState::Running));
        view_->setTarget(0.8);
        QCOMPARE(view_->target(), 0.8);
        QCOMPARE(view_->stepsChart().seriesPoints(StepsToTargetView::runKey(b128)),
                 QList<QPointF>({{128.0, 20.0}}));
        QCOMPARE(view_->stepsChart().seriesPoints(StepsToTargetView::runKey(b256)),
                 QList<QPointF>({{256.0, 10.0}}));
        QVERIFY(!view_->stepsChart().hasSeries(StepsToTargetView::runKey(b512)));
        const auto* selector = view_->findChild<QComboBox*>(QStringLiteral("targetSelector"));
        QCOMPARE(selector->count(), 3);
        QCOMPARE(selector->currentText(), QStringLiteral("80%"));
        const auto* not_reached = view_->findChild<QLabel*>(QStringLiteral("notReached"));
        QCOMPARE(not_reached->text(), QStringLiteral("Did not reach 80%: b512 (still running)."));

        // A chosen target stays when the runs change.
        runs_->add(sweep_run(8, "b1024", {0.86, 0.91}));
        view_->redrawNow();
        QCOMPARE(view_->target(), 0.8);
    }

    void withoutTwoRunsAtATargetTheFallbackIsShown() {
        runs_->add(sweep_run(1, "b128", {0.7, 0.8, 0.86, 0.91}));
        runs_->add(sweep_run(2, "b256", {0.8, 0.84}));
        view_->redrawNow();
        QCOMPARE(view_->target(), StepsToTargetView::fallback_target);
        QCOMPARE(view_->shown().reached.size(), std::size_t(1));
        // One batch: no line.
        QVERIFY(!view_->stepsChart().hasSeries(StepsToTargetView::perfectScalingKey()));
    }

    void hiddenAndRemovedRunsLeaveTheCharts() {
        const int b128 = runs_->add(sweep_run(1, "b128", {0.91}));
        const int b256 = runs_->add(sweep_run(2, "b256", {0.92}));
        const int b512 = runs_->add(sweep_run(4, "b512", {0.93}));
        view_->redrawNow();
        QVERIFY(view_->imagesChart().hasSeries(StepsToTargetView::runKey(b256)));
        runs_->setVisible(b256, false);
        runs_->remove(b512);
        QTRY_VERIFY(!view_->imagesChart().hasSeries(StepsToTargetView::runKey(b256)));
        QVERIFY(!view_->stepsChart().hasSeries(StepsToTargetView::runKey(b256)));
        QVERIFY(!view_->stepsChart().hasSeries(StepsToTargetView::runKey(b512)));
        QVERIFY(view_->stepsChart().hasSeries(StepsToTargetView::runKey(b128)));
        QCOMPARE(view_->shown().reached.size(), std::size_t(1));
    }

    void withoutRunsItExplainsWhatToRun() {
        const auto* not_reached = view_->findChild<QLabel*>(QStringLiteral("notReached"));
        QVERIFY(not_reached->text().contains(QStringLiteral("different global batches")));
        QCOMPARE(view_->target(), StepsToTargetView::fallback_target);
    }

  private:
    std::unique_ptr<RunController> controller_;
    std::unique_ptr<RunCollection> runs_;
    std::unique_ptr<StepsToTargetView> view_;
};

QTEST_MAIN(TestStepsToTargetView)
#include "test_steps_to_target_view.moc"
