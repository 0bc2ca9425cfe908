#include <QChart>
#include <QChartView>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QValueAxis>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <memory>

#include "chart_grid.h"
#include "chart_test_runs.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_palette.h"

using scalelab::ChartGrid;
using scalelab::ChartKind;
using scalelab::Metric;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::SeriesPart;
using scalelab::XAxis;
using scalelab::testing::chart_test_run;
using scalelab::testing::find_series;

namespace {

QChart* chart_of(ChartGrid& grid, ChartKind kind) {
    return qobject_cast<QChartView*>(grid.chart(kind).widget())->chart();
}

// The series' entry in the QChart: its legend name, colour and pen.
QLineSeries* series_of(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return find_series(grid.chart(kind), ChartGrid::seriesKey(run, part));
}

QList<QPointF> points_of(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return grid.chart(kind).seriesPoints(ChartGrid::seriesKey(run, part));
}

bool has(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return grid.chart(kind).hasSeries(ChartGrid::seriesKey(run, part));
}

// Whether the legend shows the series. The legend lays its markers out (and only then shows
// them) from the event loop.
bool legend_shows(ChartGrid& grid, ChartKind kind, QLineSeries* series) {
    QCoreApplication::processEvents();
    const QList<QLegendMarker*> markers = chart_of(grid, kind)->legend()->markers(series);
    return !markers.isEmpty() && markers.front()->isVisible();
}

}  // namespace

class TestChartGrid : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        controller_ = std::make_unique<RunController>();
        runs_ = std::make_unique<RunCollection>(*controller_);
        grid_ = std::make_unique<ChartGrid>(*runs_);
        grid_->resize(1200, 800);
        // Shown, because a legend marker of a widget never shown never counts as visible.
        grid_->show();
        QVERIFY(QTest::qWaitForWindowExposed(grid_.get()));
    }

    void cleanup() {
        grid_.reset();
        runs_.reset();
        controller_.reset();
    }

    void everyRunGetsItsColourAndName() {
        const int first = runs_->add(chart_test_run("wide", 300));
        const int second = runs_->add(chart_test_run("narrow", 300));
        grid_->redrawNow();

        for (const ChartKind kind : scalelab::all_chart_kinds) {
            QLineSeries* a = series_of(*grid_, kind, first, SeriesPart::Curve);
            QLineSeries* b = series_of(*grid_, kind, second, SeriesPart::Curve);
            QVERIFY(a != nullptr);
            QVERIFY(b != nullptr);
            QCOMPARE(a->name(), QStringLiteral("wide"));
            QCOMPARE(b->name(), QStringLiteral("narrow"));
            QCOMPARE(a->color(), scalelab::run_colour(runs_->find(first)->colour));
            QCOMPARE(b->color(), scalelab::run_colour(runs_->find(second)->colour));
            QVERIFY(a->color() != b->color());
            QVERIFY(legend_shows(*grid_, kind, a));
            QVERIFY(!points_of(*grid_, kind, first, SeriesPart::Curve).isEmpty());
        }
        // Behind the smoothed loss: the raw points, faint and out of the legend.
        QLineSeries* raw = series_of(*grid_, ChartKind::TrainLoss, first, SeriesPart::Raw);
        QVERIFY(raw != nullptr);
        QCOMPARE(points_of(*grid_, ChartKind::TrainLoss, first, SeriesPart::Raw).size(), 300);
        QVERIFY(raw->color().alpha() < 255);
        QVERIFY(!legend_shows(*grid_, ChartKind::TrainLoss, raw));
        // Validation accuracy: one marked point per epoch, not smoothed.
        QVERIFY(
            series_of(*grid_, ChartKind::ValAccuracy, first, SeriesPart::Curve)->pointsVisible());
        const QList<QPointF> accuracy =
            points_of(*grid_, ChartKind::ValAccuracy, first, SeriesPart::Curve);
        QCOMPARE(accuracy.size(), 3);
        QCOMPARE(accuracy[0].y(), 0.5);
        QCOMPARE(accuracy[2].y(), 1.0 - 0.5 / 3);
        QVERIFY(!has(*grid_, ChartKind::ValAccuracy, first, SeriesPart::Raw));
    }

    // Weight 0.5 on the losses y1, y2, y3: y1, (y1 + 2 y2) / 3, (y1 + 2 y2 + 4 y3) / 7.
    void lossIsSmoothedWithTheDebiasedAverage() {
        QVERIFY(grid_->setSmoothing(0.5));
        const int id = runs_->add(chart_test_run("short", 3));
        grid_->redrawNow();
        const auto& loss = runs_->find(id)->curve(Metric::TrainLoss);
        const double y1 = loss[0].value, y2 = loss[1].value, y3 = loss[2].value;
        const QList<QPointF> curve = points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(curve.size(), 3);
        QCOMPARE(curve[0].y(), y1);
        QCOMPARE(curve[1].y(), (y1 + 2 * y2) / 3);
        QCOMPARE(curve[2].y(), (y1 + 2 * y2 + 4 * y3) / 7);

        // No smoothing: the curve is the raw values and there is no faint copy.
        QVERIFY(grid_->setSmoothing(0.0));
        grid_->redrawNow();
        QCOMPARE(points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve)[1].y(), y2);
        QVERIFY(!has(*grid_, ChartKind::TrainLoss, id, SeriesPart::Raw));
    }

    void smoothingOutsideItsRangeIsRefused() {
        QVERIFY(!grid_->setSmoothing(1.0));
        QVERIFY(!grid_->setSmoothing(-0.1));
        QVERIFY(!grid_->setSmoothing(std::nan("")));
        QCOMPARE(grid_->smoothing(), ChartGrid::default_smoothing);
    }

    void hiddenAndRemovedRunsVanish() {
        const int kept = runs_->add(chart_test_run("kept", 200, 100, 1.0));
        const int hidden = runs_->add(chart_test_run("hidden", 200, 100, 1.0));
        grid_->redrawNow();
        QVERIFY(has(*grid_, ChartKind::TrainLoss, hidden, SeriesPart::Curve));

        runs_->setVisible(hidden, false);
        grid_->redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds) {
            for (const SeriesPart part :
                 {SeriesPart::Curve, SeriesPart::Raw, SeriesPart::WarmupEnd}) {
                QVERIFY(!has(*grid_, kind, hidden, part));
                QVERIFY(series_of(*grid_, kind, hidden, part) == nullptr);
            }
            QVERIFY(has(*grid_, kind, kept, SeriesPart::Curve));
        }

        runs_->setVisible(hidden, true);
        grid_->redrawNow();
        QVERIFY(has(*grid_, ChartKind::TrainLoss, hidden, SeriesPart::Curve));

        runs_->remove(kept);
        grid_->redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds)
            QVERIFY(!has(*grid_, kind, kept, SeriesPart::Curve));
    }

    void longRunsAreDecimatedKeepingTheirExtremes() {
        const int id = runs_->add(chart_test_run("long", 10'000));
        grid_->redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds)
            for (const SeriesPart part : {SeriesPart::Curve, SeriesPart::Raw})
                QVERIFY(points_of(*grid_, kind, id, part).size() <= 2000);
        const QList<QPointF> raw = points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Raw);
        QVERIFY(raw.size() > 1000);

        const auto& loss = runs_->find(id)->curve(Metric::TrainLoss);
        const auto highest =
            std::max_element(loss.begin(), loss.end(),
                             [](const auto& a, const auto& b) { return a.value < b.value; });
        const auto lowest =
            std::min_element(loss.begin(), loss.end(),
                             [](const auto& a, const auto& b) { return a.value < b.value; });
        QVERIFY(raw.contains(QPointF(double(highest->step), highest->value)));
        QVERIFY(raw.contains(QPointF(double(lowest->step), lowest->value)));
    }

    void logScaleSwitchesTheAxisAndDropsNonPositivePoints() {
        auto run = chart_test_run("zero", 50);
        run.curve(Metric::TrainLoss)[10].value = 0.0;
        const int id = runs_->add(std::move(run));
        QVERIFY(grid_->setSmoothing(0.0));
        grid_->redrawNow();
        QChart* chart = chart_of(*grid_, ChartKind::TrainLoss);
        QVERIFY(qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front()) != nullptr);
        QCOMPARE(points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve).size(), 50);

        grid_->setLogLoss(true);
        QVERIFY(grid_->logLoss());
        QCOMPARE(chart->axes(Qt::Vertical).size(), 1);
        auto* log_axis = qobject_cast<QLogValueAxis*>(chart->axes(Qt::Vertical).front());
        QVERIFY(log_axis != nullptr);
        QCOMPARE(points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve).size(), 49);
        QVERIFY(log_axis->min() > 0);
        QVERIFY(log_axis->min() <= 2.0 / std::sqrt(50.0) - 0.1);
        QVERIFY(series_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve)
                    ->attachedAxes()
                    .contains(log_axis));

        grid_->setLogLoss(false);
        QVERIFY(qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front()) != nullptr);
        QCOMPARE(points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve).size(), 50);
    }

    void xAxisCountsWhatWasChosen() {
        const int id = runs_->add(chart_test_run("x", 250, 100));
        QVERIFY(grid_->setSmoothing(0.0));
        grid_->setXAxis(XAxis::Samples);
        grid_->redrawNow();
        QList<QPointF> loss = points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(loss[0].x(), double(scalelab::testing::test_global_batch));
        QCOMPARE(loss[249].x(), 250.0 * scalelab::testing::test_global_batch);

        grid_->setXAxis(XAxis::Epoch);
        grid_->redrawNow();
        loss = points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(loss[49].x(), 0.5);  // step 50 of 100 per epoch
        const QList<QPointF> accuracy =
            points_of(*grid_, ChartKind::ValAccuracy, id, SeriesPart::Curve);
        QCOMPARE(accuracy[0].x(), 1.0);
        QCOMPARE(accuracy[1].x(), 2.0);

        grid_->setXAxis(XAxis::WallTime);
        grid_->redrawNow();
        loss = points_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(loss[99].x(), 100 * scalelab::testing::test_step_seconds);
        auto* x_axis = qobject_cast<QValueAxis*>(
            chart_of(*grid_, ChartKind::TrainLoss)->axes(Qt::Horizontal).front());
        QCOMPARE(x_axis->titleText(), QStringLiteral("Wall time (s)"));
        QVERIFY(x_axis->max() >= 250 * scalelab::testing::test_step_seconds);
    }

    void warmupEndIsMarkedOnEveryChart() {
        const int warm = runs_->add(chart_test_run("warm", 300, 100, 1.5));
        const int cold = runs_->add(chart_test_run("cold", 300, 100));
        grid_->redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds) {
            const QList<QPointF> ends = points_of(*grid_, kind, warm, SeriesPart::WarmupEnd);
            QCOMPARE(ends.size(), 2);
            QCOMPARE(ends[0].x(), 150.0);
            QCOMPARE(ends[1].x(), 150.0);
            QVERIFY(ends[0].y() < ends[1].y());
            QLineSeries* marker = series_of(*grid_, kind, warm, SeriesPart::WarmupEnd);
            QCOMPARE(marker->pen().style(), Qt::DashLine);
            QCOMPARE(marker->color(), scalelab::run_colour(runs_->find(warm)->colour));
            QVERIFY(!legend_shows(*grid_, kind, marker));
            QVERIFY(!has(*grid_, kind, cold, SeriesPart::WarmupEnd));
        }
        grid_->setXAxis(XAxis::Epoch);
        grid_->redrawNow();
        QCOMPARE(points_of(*grid_, ChartKind::TrainLoss, warm, SeriesPart::WarmupEnd)[0].x(), 1.5);
    }

    // Many changes between two ticks of the redraw timer make one redraw.
    void liveChangesAreBatchedIntoOneRedraw() {
        const int id = runs_->add(chart_test_run("live", 100));
        grid_->redrawNow();
        const int before = grid_->redrawCount();
        for (int i = 0; i < 20; ++i)
            runs_->rename(id, QStringLiteral("live %1").arg(i));
        QCOMPARE(grid_->redrawCount(), before);
        QTRY_COMPARE(grid_->redrawCount(), before + 1);
        QTest::qWait(3 * ChartGrid::redraw_interval_ms);
        QCOMPARE(grid_->redrawCount(), before + 1);
        QCOMPARE(series_of(*grid_, ChartKind::TrainLoss, id, SeriesPart::Curve)->name(),
                 QStringLiteral("live 19"));
    }

    // Empty charts and a run of one point still get finite, non-empty axis ranges.
    void axesStayFiniteWithLittleData() {
        grid_->redrawNow();
        runs_->add(chart_test_run("one point", 1, 1));
        grid_->redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds) {
            for (QAbstractAxis* axis : chart_of(*grid_, kind)->axes()) {
                auto* value_axis = qobject_cast<QValueAxis*>(axis);
                QVERIFY(value_axis != nullptr);
                QVERIFY(std::isfinite(value_axis->min()));
                QVERIFY(std::isfinite(value_axis->max()));
                QVERIFY(value_axis->min() < value_axis->max());
            }
        }
    }

  private:
    std::unique_ptr<RunController> controller_;
    std::unique_ptr<RunCollection> runs_;
    std::unique_ptr<ChartGrid> grid_;
};

QTEST_MAIN(TestChartGrid)
#include "test_chart_grid.moc"
