#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QHelpEvent>
#include <QLogValueAxis>
#include <QToolTip>
#include <QValueAxis>
#include <QtTest>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <vector>

#include "chart_grid.h"
#include "chart_legend.h"
#include "chart_test_runs.h"
#include "qt_charts_surface.h"
#include "rect_text.h"
#include "run_collection.h"
#include "run_palette.h"

using scalelab::ChartGrid;
using scalelab::ChartKind;
using scalelab::ChartLegend;
using scalelab::Metric;
using scalelab::MetricPoint;
using scalelab::QtChartsSurface;
using scalelab::RunRecord;
using scalelab::RunState;
using scalelab::SeriesPart;
using scalelab::SeriesStyle;
using scalelab::XAxis;
using scalelab::testing::chart_test_run;
using scalelab::testing::ChartTestGrid;
using scalelab::testing::rect_text;

namespace {

QChart* chart_of(ChartGrid& grid, ChartKind kind) {
    return qobject_cast<QChartView*>(grid.chart(kind).widget())->chart();
}

// The name the legend lists the series under; empty when it is not listed.
QString legend_of(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return grid.chart(kind).seriesLegend(ChartGrid::seriesKey(run, part));
}

// How the series is drawn: colour, faint, dashed.
std::optional<SeriesStyle> style_of(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return grid.chart(kind).seriesStyle(ChartGrid::seriesKey(run, part));
}

QList<QPointF> points_of(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return grid.chart(kind).seriesPoints(ChartGrid::seriesKey(run, part));
}

bool has(ChartGrid& grid, ChartKind kind, int run, SeriesPart part) {
    return grid.chart(kind).hasSeries(ChartGrid::seriesKey(run, part));
}

// The run as two devices train it: B_simple measured at every step, rising from 100 towards
// 300 (the global batch stays test_global_batch).
RunRecord with_noise_scale(RunRecord run) {
    run.info.devices = 2;
    for (const MetricPoint& loss : std::vector(run.curve(Metric::TrainLoss))) {
        MetricPoint point = loss;
        point.value = 300.0 - 200.0 / double(point.step);
        run.curve(Metric::NoiseScale).push_back(point);
    }
    return run;
}

// The run diverged at the step after its last: that step's loss is NaN.
RunRecord diverged(RunRecord run) {
    MetricPoint nan = run.curve(Metric::TrainLoss).back();
    ++nan.step;
    nan.value = std::numeric_limits<double>::quiet_NaN();
    run.curve(Metric::TrainLoss).push_back(nan);
    run.step = nan.step;
    run.state = RunState::Diverged;
    return run;
}

// The room the chart's own legend takes; empty when it draws none.
QRectF legend_area(ChartGrid& grid, ChartKind kind) {
    return dynamic_cast<QtChartsSurface&>(grid.chart(kind)).legendArea();
}

// Runs named `name` with %1 their number, drawn and laid out.
std::vector<int> add_runs(scalelab::testing::ChartTestGrid& charts, int count,
                          const QString& name) {
    std::vector<int> ids;
    for (int i = 0; i < count; ++i)
        ids.push_back(charts.runs.add(chart_test_run(name.arg(i + 1), 200)));
    charts.grid.redrawNow();
    QCoreApplication::processEvents();
    return ids;
}

// The tool tips `widget` shows for the pointer resting anywhere on it.
std::set<QString> tool_tips(QWidget& widget) {
    std::set<QString> tips;
    for (int y = 0; y < widget.height(); y += 3)
        for (int x = 0; x < widget.width(); x += 10) {
            QHelpEvent help(QEvent::ToolTip, QPoint(x, y), widget.mapToGlobal(QPoint(x, y)));
            QCoreApplication::sendEvent(&widget, &help);
            if (QToolTip::isVisible())
                tips.insert(QToolTip::text());
        }
    return tips;
}

}  // namespace

class TestChartGrid : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        charts_ = std::make_unique<ChartTestGrid>();
        QVERIFY(charts_->showLaidOut());
    }

    void cleanup() { charts_.reset(); }

    void everyRunGetsItsColourAndName() {
        const int first = charts_->runs.add(with_noise_scale(chart_test_run("wide", 300)));
        const int second = charts_->runs.add(with_noise_scale(chart_test_run("narrow", 300)));
        charts_->grid.redrawNow();

        for (const ChartKind kind : scalelab::all_chart_kinds) {
            QCOMPARE(legend_of(charts_->grid, kind, first, SeriesPart::Curve),
                     QStringLiteral("wide"));
            QCOMPARE(legend_of(charts_->grid, kind, second, SeriesPart::Curve),
                     QStringLiteral("narrow"));
            const auto a = style_of(charts_->grid, kind, first, SeriesPart::Curve);
            const auto b = style_of(charts_->grid, kind, second, SeriesPart::Curve);
            QVERIFY(a.has_value());
            QVERIFY(b.has_value());
            QCOMPARE(a->colour, scalelab::run_colour(charts_->runs.find(first)->colour));
            QCOMPARE(b->colour, scalelab::run_colour(charts_->runs.find(second)->colour));
            QVERIFY(a->colour != b->colour);
            QVERIFY(!points_of(charts_->grid, kind, first, SeriesPart::Curve).isEmpty());
        }
        // Behind the smoothed loss: the raw points, faint and out of the legend.
        const auto raw = style_of(charts_->grid, ChartKind::TrainLoss, first, SeriesPart::Raw);
        QVERIFY(raw.has_value());
        QCOMPARE(points_of(charts_->grid, ChartKind::TrainLoss, first, SeriesPart::Raw).size(),
                 300);
        QVERIFY(raw->faint);
        QCOMPARE(raw->colour, scalelab::run_colour(charts_->runs.find(first)->colour));
        QVERIFY(legend_of(charts_->grid, ChartKind::TrainLoss, first, SeriesPart::Raw).isEmpty());
        // Validation accuracy: one marked point per epoch, not smoothed.
        QVERIFY(style_of(charts_->grid, ChartKind::ValAccuracy, first, SeriesPart::Curve)->markers);
        const QList<QPointF> accuracy =
            points_of(charts_->grid, ChartKind::ValAccuracy, first, SeriesPart::Curve);
        QCOMPARE(accuracy.size(), 3);
        QCOMPARE(accuracy[0].y(), 0.5);
        QCOMPARE(accuracy[2].y(), 1.0 - 0.5 / 3);
        QVERIFY(!has(charts_->grid, ChartKind::ValAccuracy, first, SeriesPart::Raw));
    }

    // Weight 0.5 on the losses y1, y2, y3: y1, (y1 + 2 y2) / 3, (y1 + 2 y2 + 4 y3) / 7.
    void lossIsSmoothedWithTheDebiasedAverage() {
        QVERIFY(charts_->grid.setSmoothing(0.5));
        const int id = charts_->runs.add(chart_test_run("short", 3));
        charts_->grid.redrawNow();
        const auto& loss = charts_->runs.find(id)->curve(Metric::TrainLoss);
        const double y1 = loss[0].value, y2 = loss[1].value, y3 = loss[2].value;
        const QList<QPointF> curve =
            points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(curve.size(), 3);
        QCOMPARE(curve[0].y(), y1);
        QCOMPARE(curve[1].y(), (y1 + 2 * y2) / 3);
        QCOMPARE(curve[2].y(), (y1 + 2 * y2 + 4 * y3) / 7);

        // No smoothing: the curve is the raw values and there is no faint copy.
        QVERIFY(charts_->grid.setSmoothing(0.0));
        charts_->grid.redrawNow();
        QCOMPARE(points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve)[1].y(), y2);
        QVERIFY(!has(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Raw));
    }

    void smoothingOutsideItsRangeIsRefused() {
        QVERIFY(!charts_->grid.setSmoothing(1.0));
        QVERIFY(!charts_->grid.setSmoothing(-0.1));
        QVERIFY(!charts_->grid.setSmoothing(std::nan("")));
        QCOMPARE(charts_->grid.smoothing(), ChartGrid::default_smoothing);
    }

    void hiddenAndRemovedRunsVanish() {
        const int kept = charts_->runs.add(with_noise_scale(chart_test_run("kept", 200, 100, 1.0)));
        const int hidden =
            charts_->runs.add(diverged(with_noise_scale(chart_test_run("hidden", 200, 100, 1.0))));
        charts_->grid.redrawNow();
        QVERIFY(has(charts_->grid, ChartKind::TrainLoss, hidden, SeriesPart::Curve));

        charts_->runs.setVisible(hidden, false);
        charts_->grid.redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds) {
            for (const SeriesPart part : {SeriesPart::Curve, SeriesPart::Raw, SeriesPart::WarmupEnd,
                                          SeriesPart::GlobalBatch}) {
                QVERIFY(!has(charts_->grid, kind, hidden, part));
            }
            QVERIFY(!charts_->grid.chart(kind).hasSeries(ChartGrid::annotationKey(hidden, 0)));
            QVERIFY(has(charts_->grid, kind, kept, SeriesPart::Curve));
        }

        charts_->runs.setVisible(hidden, true);
        charts_->grid.redrawNow();
        QVERIFY(has(charts_->grid, ChartKind::TrainLoss, hidden, SeriesPart::Curve));

        charts_->runs.remove(kept);
        charts_->grid.redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds)
            QVERIFY(!has(charts_->grid, kind, kept, SeriesPart::Curve));
    }

    void longRunsAreDecimatedKeepingTheirExtremes() {
        const int id = charts_->runs.add(chart_test_run("long", 10'000));
        charts_->grid.redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds)
            for (const SeriesPart part : {SeriesPart::Curve, SeriesPart::Raw})
                QVERIFY(points_of(charts_->grid, kind, id, part).size() <= 2000);
        const QList<QPointF> raw =
            points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Raw);
        QVERIFY(raw.size() > 1000);

        const auto& loss = charts_->runs.find(id)->curve(Metric::TrainLoss);
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
        const int id = charts_->runs.add(std::move(run));
        QVERIFY(charts_->grid.setSmoothing(0.0));
        charts_->grid.redrawNow();
        QChart* chart = chart_of(charts_->grid, ChartKind::TrainLoss);
        QVERIFY(qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front()) != nullptr);
        QCOMPARE(points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve).size(), 50);

        charts_->grid.setLogLoss(true);
        QVERIFY(charts_->grid.logLoss());
        QCOMPARE(chart->axes(Qt::Vertical).size(), 1);
        auto* log_axis = qobject_cast<QLogValueAxis*>(chart->axes(Qt::Vertical).front());
        QVERIFY(log_axis != nullptr);
        QCOMPARE(points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve).size(), 49);
        QVERIFY(log_axis->min() > 0);
        QVERIFY(log_axis->min() <= 2.0 / std::sqrt(50.0) - 0.1);

        charts_->grid.setLogLoss(false);
        QVERIFY(qobject_cast<QValueAxis*>(chart->axes(Qt::Vertical).front()) != nullptr);
        QCOMPARE(points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve).size(), 50);
    }

    void xAxisCountsWhatWasChosen() {
        const int id = charts_->runs.add(chart_test_run("x", 250, 100));
        QVERIFY(charts_->grid.setSmoothing(0.0));
        charts_->grid.setXAxis(XAxis::Samples);
        charts_->grid.redrawNow();
        QList<QPointF> loss = points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(loss[0].x(), double(scalelab::testing::test_global_batch));
        QCOMPARE(loss[249].x(), 250.0 * scalelab::testing::test_global_batch);

        charts_->grid.setXAxis(XAxis::Epoch);
        charts_->grid.redrawNow();
        loss = points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(loss[49].x(), 0.5);  // step 50 of 100 per epoch
        const QList<QPointF> accuracy =
            points_of(charts_->grid, ChartKind::ValAccuracy, id, SeriesPart::Curve);
        QCOMPARE(accuracy[0].x(), 1.0);
        QCOMPARE(accuracy[1].x(), 2.0);

        charts_->grid.setXAxis(XAxis::WallTime);
        charts_->grid.redrawNow();
        loss = points_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve);
        QCOMPARE(loss[99].x(), 100 * scalelab::testing::test_step_seconds);
        auto* x_axis = qobject_cast<QValueAxis*>(
            chart_of(charts_->grid, ChartKind::TrainLoss)->axes(Qt::Horizontal).front());
        QCOMPARE(x_axis->titleText(), QStringLiteral("Training time (s)"));
        QVERIFY(x_axis->max() >= 250 * scalelab::testing::test_step_seconds);
    }

    void warmupEndIsMarkedOnEveryChart() {
        const int warm = charts_->runs.add(with_noise_scale(chart_test_run("warm", 300, 100, 1.5)));
        const int cold = charts_->runs.add(chart_test_run("cold", 300, 100));
        charts_->grid.redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds) {
            const QList<QPointF> ends = points_of(charts_->grid, kind, warm, SeriesPart::WarmupEnd);
            QCOMPARE(ends.size(), 2);
            QCOMPARE(ends[0].x(), 150.0);
            QCOMPARE(ends[1].x(), 150.0);
            QVERIFY(ends[0].y() < ends[1].y());
            const auto marker = style_of(charts_->grid, kind, warm, SeriesPart::WarmupEnd);
            QVERIFY(marker.has_value());
            QVERIFY(marker->dashed);
            QCOMPARE(marker->colour, scalelab::run_colour(charts_->runs.find(warm)->colour));
            QVERIFY(legend_of(charts_->grid, kind, warm, SeriesPart::WarmupEnd).isEmpty());
            QVERIFY(!has(charts_->grid, kind, cold, SeriesPart::WarmupEnd));
        }
        charts_->grid.setXAxis(XAxis::Epoch);
        charts_->grid.redrawNow();
        QCOMPARE(points_of(charts_->grid, ChartKind::TrainLoss, warm, SeriesPart::WarmupEnd)[0].x(),
                 1.5);
    }

    // Many changes between two ticks of the redraw timer make one redraw.
    void liveChangesAreBatchedIntoOneRedraw() {
        const int id = charts_->runs.add(chart_test_run("live", 100));
        charts_->grid.redrawNow();
        const int before = charts_->grid.redrawCount();
        for (int i = 0; i < 20; ++i)
            charts_->runs.rename(id, QStringLiteral("live %1").arg(i));
        QCOMPARE(charts_->grid.redrawCount(), before);
        QTRY_COMPARE(charts_->grid.redrawCount(), before + 1);
        QTest::qWait(3 * ChartGrid::redraw_interval_ms);
        QCOMPARE(charts_->grid.redrawCount(), before + 1);
        QCOMPARE(legend_of(charts_->grid, ChartKind::TrainLoss, id, SeriesPart::Curve),
                 QStringLiteral("live 19"));
    }

    // Empty charts and a run of one point still get finite, non-empty axis ranges.
    void axesStayFiniteWithLittleData() {
        charts_->grid.redrawNow();
        charts_->runs.add(chart_test_run("one point", 1, 1));
        charts_->grid.redrawNow();
        for (const ChartKind kind : scalelab::all_chart_kinds) {
            for (QAbstractAxis* axis : chart_of(charts_->grid, kind)->axes()) {
                // The noise scale's y axis is logarithmic.
                auto* value_axis = qobject_cast<QValueAxis*>(axis);
                auto* log_axis = qobject_cast<QLogValueAxis*>(axis);
                QVERIFY(value_axis != nullptr || log_axis != nullptr);
                const double min = value_axis != nullptr ? value_axis->min() : log_axis->min();
                const double max = value_axis != nullptr ? value_axis->max() : log_axis->max();
                QVERIFY(std::isfinite(min));
                QVERIFY(std::isfinite(max));
                QVERIFY(min < max);
                QVERIFY(log_axis == nullptr || min > 0);
            }
        }
    }

    // B_simple per step on a log axis, and the run's global batch as a dashed line to read it
    // against; a one-device run measures no noise scale and draws neither.
    void noiseScaleIsDrawnAgainstTheGlobalBatch() {
        QVERIFY(charts_->grid.setSmoothing(0.0));
        const int two = charts_->runs.add(with_noise_scale(chart_test_run("two devices", 150)));
        const int one = charts_->runs.add(chart_test_run("one device", 150));
        charts_->grid.redrawNow();
        const auto& measured = charts_->runs.find(two)->curve(Metric::NoiseScale);

        QVERIFY(charts_->grid.chart(ChartKind::NoiseScale).logY());
        const QList<QPointF> curve =
            points_of(charts_->grid, ChartKind::NoiseScale, two, SeriesPart::Curve);
        QCOMPARE(curve.size(), 150);
        QCOMPARE(curve[0], QPointF(1.0, measured[0].value));
        QCOMPARE(curve[149], QPointF(150.0, measured[149].value));

        const QList<QPointF> batch =
            points_of(charts_->grid, ChartKind::NoiseScale, two, SeriesPart::GlobalBatch);
        QCOMPARE(batch.size(), 2);
        QCOMPARE(batch[0].y(), double(scalelab::testing::test_global_batch));
        QCOMPARE(batch[1].y(), double(scalelab::testing::test_global_batch));
        QVERIFY(batch[0].x() <= 1.0);
        QVERIFY(batch[1].x() >= 150.0);
        const auto line =
            style_of(charts_->grid, ChartKind::NoiseScale, two, SeriesPart::GlobalBatch);
        QVERIFY(line.has_value());
        QVERIFY(line->dashed);
        QCOMPARE(line->colour, scalelab::run_colour(charts_->runs.find(two)->colour));
        QVERIFY(legend_of(charts_->grid, ChartKind::NoiseScale, two, SeriesPart::GlobalBatch)
                    .isEmpty());
        // The y axis reaches down to the line below the curve.
        auto* y_axis = qobject_cast<QLogValueAxis*>(
            chart_of(charts_->grid, ChartKind::NoiseScale)->axes(Qt::Vertical).front());
        QVERIFY(y_axis != nullptr);
        QVERIFY(y_axis->min() <= scalelab::testing::test_global_batch);

        QVERIFY(!has(charts_->grid, ChartKind::NoiseScale, one, SeriesPart::Curve));
        QVERIFY(!has(charts_->grid, ChartKind::NoiseScale, one, SeriesPart::GlobalBatch));
        QVERIFY(has(charts_->grid, ChartKind::TrainLoss, one, SeriesPart::Curve));
    }

    void onlyTheShownChartsAreLaidOut() {
        const auto visible = [this](ChartKind kind) {
            return charts_->grid.chart(kind).widget()->isVisible();
        };
        const auto place = [this](ChartKind kind) {
            return charts_->grid.chart(kind).widget()->geometry();
        };
        const std::vector<ChartKind> defaults(scalelab::default_shown_charts.begin(),
                                              scalelab::default_shown_charts.end());
        QCOMPARE(charts_->grid.shownCharts(), defaults);
        QVERIFY(!visible(ChartKind::NoiseScale));
        QVERIFY(visible(ChartKind::LearningRate));

        // A lesson about throughput: two charts side by side, the first on the left.
        QVERIFY(charts_->grid.setShownCharts({ChartKind::ImagesPerSecond, ChartKind::TrainLoss}));
        QCoreApplication::processEvents();
        QVERIFY(visible(ChartKind::ImagesPerSecond));
        QVERIFY(visible(ChartKind::TrainLoss));
        for (const ChartKind hidden :
             {ChartKind::ValAccuracy, ChartKind::LearningRate, ChartKind::NoiseScale})
            QVERIFY(!visible(hidden));
        QCOMPARE(place(ChartKind::ImagesPerSecond).top(), place(ChartKind::TrainLoss).top());
        QVERIFY(place(ChartKind::ImagesPerSecond).right() < place(ChartKind::TrainLoss).left());
        QVERIFY(place(ChartKind::TrainLoss).width() > charts_->grid.width() / 3);
        // Hidden charts are still drawn.
        const int id = charts_->runs.add(chart_test_run("drawn", 50));
        charts_->grid.redrawNow();
        QVERIFY(has(charts_->grid, ChartKind::LearningRate, id, SeriesPart::Curve));

        // Five: three over two, each row as wide as the grid.
        std::vector<ChartKind> five(scalelab::all_chart_kinds.begin(),
                                    scalelab::all_chart_kinds.end());
        QVERIFY(charts_->grid.setShownCharts(five));
        QCoreApplication::processEvents();
        for (const ChartKind kind : five)
            QVERIFY(visible(kind));
        QCOMPARE(place(ChartKind::ValAccuracy).top(), place(ChartKind::TrainLoss).top());
        QCOMPARE(place(ChartKind::ImagesPerSecond).top(), place(ChartKind::TrainLoss).top());
        QVERIFY(place(ChartKind::LearningRate).top() > place(ChartKind::TrainLoss).bottom());
        QCOMPARE(place(ChartKind::NoiseScale).top(), place(ChartKind::LearningRate).top());
        QVERIFY(place(ChartKind::NoiseScale).width() > place(ChartKind::TrainLoss).width());

        // None, or one chart twice, is refused.
        QVERIFY(!charts_->grid.setShownCharts({}));
        QVERIFY(!charts_->grid.setShownCharts({ChartKind::TrainLoss, ChartKind::TrainLoss}));
        QCOMPARE(charts_->grid.shownCharts(), five);
    }

    void theNoiseScaleBoxShowsAndHidesItsChart() {
        QCheckBox* box = nullptr;
        for (QCheckBox* candidate : charts_->grid.findChildren<QCheckBox*>())
            if (candidate->text() == QStringLiteral("&Noise scale"))
                box = candidate;
        QVERIFY(box != nullptr);
        QVERIFY(!box->isChecked());
        box->click();
        QCOMPARE(charts_->grid.shownCharts().back(), ChartKind::NoiseScale);
        QCOMPARE(charts_->grid.shownCharts().size(), std::size_t(5));
        QVERIFY(charts_->grid.chart(ChartKind::NoiseScale).widget()->isVisible());
        box->click();
        QCOMPARE(charts_->grid.shownCharts().size(), std::size_t(4));
        QVERIFY(!charts_->grid.chart(ChartKind::NoiseScale).widget()->isVisible());
        // Shown by a lesson: the box says so.
        QVERIFY(charts_->grid.setShownCharts({ChartKind::NoiseScale}));
        QVERIFY(box->isChecked());
    }

    // The divergence is written on the loss chart at the last loss that can be drawn, a target
    // reached on the accuracy chart at its epoch.
    void annotationsAreWrittenAtTheirPoints() {
        QVERIFY(charts_->grid.setSmoothing(0.0));
        RunRecord run = diverged(chart_test_run("hot", 150, 100));
        run.targets.push_back(
            {.target = 0.5, .seconds = 1.0, .step = 100, .epoch = 1, .images = 6400});
        const int id = charts_->runs.add(std::move(run));
        charts_->grid.redrawNow();
        const auto& loss = charts_->runs.find(id)->curve(Metric::TrainLoss);

        const QString divergence = ChartGrid::annotationKey(id, 0);
        QCOMPARE(charts_->grid.chart(ChartKind::TrainLoss).seriesPoints(divergence),
                 QList<QPointF>({QPointF(150.0, loss[149].value)}));
        QCOMPARE(charts_->grid.chart(ChartKind::TrainLoss).seriesStyle(divergence)->colour,
                 scalelab::run_colour(charts_->runs.find(id)->colour));
        const QString reached = ChartGrid::annotationKey(id, 1);
        QCOMPARE(charts_->grid.chart(ChartKind::ValAccuracy).seriesPoints(reached),
                 QList<QPointF>({QPointF(100.0, 0.5)}));
        for (const ChartKind kind :
             {ChartKind::ImagesPerSecond, ChartKind::LearningRate, ChartKind::NoiseScale})
            for (const QString& key : {divergence, reached})
                QVERIFY(!charts_->grid.chart(kind).hasSeries(key));
        QVERIFY(!charts_->grid.chart(ChartKind::ValAccuracy).hasSeries(divergence));

        // In epochs: step 150 of 100 per epoch.
        charts_->grid.setXAxis(XAxis::Epoch);
        charts_->grid.redrawNow();
        QCOMPARE(charts_->grid.chart(ChartKind::TrainLoss).seriesPoints(divergence),
                 QList<QPointF>({QPointF(1.5, loss[149].value)}));
        QCOMPARE(charts_->grid.chart(ChartKind::ValAccuracy).seriesPoints(reached),
                 QList<QPointF>({QPointF(1.0, 0.5)}));

        // A renamed run keeps its labels, a removed one loses them.
        charts_->runs.rename(id, QStringLiteral("renamed"));
        charts_->grid.redrawNow();
        QVERIFY(charts_->grid.chart(ChartKind::TrainLoss).hasSeries(divergence));
        charts_->runs.remove(id);
        charts_->grid.redrawNow();
        QVERIFY(!charts_->grid.chart(ChartKind::TrainLoss).hasSeries(divergence));
        QVERIFY(!charts_->grid.chart(ChartKind::ValAccuracy).hasSeries(reached));
    }

    // Eight long names on small charts in presenter mode: the charts draw no legend, the one
    // under the grid lists all eight runs in their colours.
    void manyLongNamesMoveToOneLegendUnderTheGrid() {
        charts_->grid.resize(800, 600);
        QVERIFY(charts_->grid.setFontScale(1.5));
        const std::vector<int> ids =
            add_runs(*charts_, 8, QStringLiteral("batch 2x256, lr 3.2, warm-up 5 epochs, run %1"));
        const ChartLegend& shared = charts_->grid.sharedLegend();
        QVERIFY(shared.isVisible());
        QCOMPARE(shared.entries().size(), std::size_t(8));
        for (std::size_t i = 0; i < ids.size(); ++i) {
            QCOMPARE(shared.entries()[i].name, charts_->runs.find(ids[i])->name);
            QCOMPARE(shared.entries()[i].colour,
                     scalelab::run_colour(charts_->runs.find(ids[i])->colour));
        }
        for (const ChartKind kind : charts_->grid.shownCharts()) {
            QVERIFY(legend_area(charts_->grid, kind).isEmpty());
            // Under every chart.
            QVERIFY(shared.geometry().top() >=
                    charts_->grid.chart(kind).widget()->geometry().bottom());
        }
        // Every name is shown, whole or elided in its middle; resting the pointer on an elided
        // one shows it whole.
        const std::vector<QString> shown = shared.shownNames();
        for (const QString& name : shown)
            QVERIFY2(name.startsWith(QStringLiteral("batch")), qPrintable(name));
        QVERIFY(shared.height() >= shared.heightForWidth(shared.width()));
        const auto elided =
            std::size_t(std::count_if(shown.begin(), shown.end(), [](const QString& name) {
                return name.contains(QChar(0x2026));
            }));
        QVERIFY(elided > 0);
        QCOMPARE(tool_tips(*charts_->grid.findChild<ChartLegend*>()).size(), elided);
    }

    void twoShortNamesStayOnEachChart() {
        charts_->grid.resize(1600, 1000);
        add_runs(*charts_, 2, QStringLiteral("run %1"));
        QVERIFY(!charts_->grid.sharedLegend().isVisible());
        for (const ChartKind kind : charts_->grid.shownCharts()) {
            const QRectF legend = legend_area(charts_->grid, kind);
            const QRectF plot = chart_of(charts_->grid, kind)->plotArea();
            QVERIFY2(!legend.isEmpty() && legend.top() > plot.bottom(),
                     qPrintable(rect_text(legend) + rect_text(plot)));
        }
    }

    // Names that fit each chart in a few rows are still listed once under the grid: one list
    // takes less room than four.
    void namesNeedingSeveralRowsOnEachChartAreListedOnce() {
        charts_->grid.resize(1600, 1000);
        add_runs(*charts_, 8, QStringLiteral("batch 2x256, lr 3.2, warm-up 5 epochs, run %1"));
        const scalelab::ChartSurface& loss = charts_->grid.chart(ChartKind::TrainLoss);
        QVERIFY(loss.legendFits(8));
        QVERIFY(!loss.legendFits(1));
        QVERIFY(charts_->grid.sharedLegend().isVisible());
        QVERIFY(legend_area(charts_->grid, ChartKind::TrainLoss).isEmpty());
    }

    // Grids from a projector's to a large screen's, with one to eight runs, in presenter mode
    // and not: each chart's legend takes a quarter of its chart at most, and the runs are
    // listed on the charts or under them.
    void aChartsLegendTakesAQuarterOfItAtMost() {
        std::vector<int> ids;
        for (const int runs : {1, 3, 8}) {
            while (int(ids.size()) < runs)
                ids.push_back(charts_->runs.add(chart_test_run(
                    QStringLiteral("batch 2x%1, lr 0.4, warm-up").arg(32 << ids.size()), 100)));
            charts_->grid.redrawNow();
            for (const QSize size : {QSize(1000, 650), QSize(1600, 950), QSize(700, 450)})
                for (const double scale : {1.0, 1.5}) {
                    charts_->grid.resize(size);
                    QVERIFY(charts_->grid.setFontScale(scale));
                    QCoreApplication::processEvents();
                    checkLegendsTakeAQuarterAtMost();
                }
        }
    }

    void theLegendBoxHidesAndShowsTheLegends() {
        add_runs(*charts_, 2, QStringLiteral("run %1"));
        auto* box = charts_->grid.findChild<QCheckBox*>(QStringLiteral("legendToggle"));
        QVERIFY(box != nullptr);
        QVERIFY(box->isChecked());
        QVERIFY(charts_->grid.legendShown());
        QSignalSpy changed(&charts_->grid, &ChartGrid::legendShownChanged);

        box->click();
        QVERIFY(!charts_->grid.legendShown());
        QCOMPARE(changed.size(), 1);
        QCOMPARE(changed.front().front().toBool(), false);
        for (const ChartKind kind : charts_->grid.shownCharts())
            QVERIFY(legend_area(charts_->grid, kind).isEmpty());
        QVERIFY(!charts_->grid.sharedLegend().isVisible());
        // Nor does it come back with more runs.
        add_runs(*charts_, 8, QStringLiteral("another rather long run name %1"));
        QVERIFY(!charts_->grid.sharedLegend().isVisible());
        QVERIFY(legend_area(charts_->grid, ChartKind::TrainLoss).isEmpty());

        charts_->grid.setLegendShown(true);
        QVERIFY(box->isChecked());
        QCOMPARE(changed.size(), 2);
        QCOMPARE(changed.back().front().toBool(), true);
        QVERIFY(charts_->grid.sharedLegend().isVisible() ||
                !legend_area(charts_->grid, ChartKind::TrainLoss).isEmpty());
    }

  private:
    // Every shown chart's legend: none, or at most a quarter of its chart's height under the
    // plot or of its width beside it; and where the charts draw none, the shared one is shown.
    void checkLegendsTakeAQuarterAtMost() {
        bool charts_list_runs = true;
        for (const ChartKind kind : charts_->grid.shownCharts()) {
            const QRectF legend = legend_area(charts_->grid, kind);
            QChart* chart = chart_of(charts_->grid, kind);
            const QSizeF size = chart->size();
            const QRectF plot = chart->plotArea();
            charts_list_runs = charts_list_runs && !legend.isEmpty();
            if (legend.isEmpty())
                continue;
            const bool below = legend.top() > plot.bottom() && legend.height() <= size.height() / 4;
            const bool beside = legend.left() > plot.right() && legend.width() <= size.width() / 4;
            QVERIFY2(below || beside, qPrintable(rect_text(legend) + rect_text(plot) +
                                                 rect_text(QRectF(QPointF(), size))));
        }
        QCOMPARE(charts_->grid.sharedLegend().isVisible(), !charts_list_runs);
    }

    std::unique_ptr<ChartTestGrid> charts_;
};

QTEST_MAIN(TestChartGrid)
#include "test_chart_grid.moc"
