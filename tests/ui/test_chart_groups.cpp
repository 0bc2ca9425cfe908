#include <QtTest>

#include <cmath>
#include <limits>
#include <memory>
#include <vector>

#include "chart_legend.h"
#include "chart_test_runs.h"
#include "curve_smoothing.h"
#include "run_palette.h"

using namespace scalelab;
using scalelab::testing::chart_test_run;
using scalelab::testing::ChartTestGrid;

namespace {

constexpr int steps = 50;

// Repeat `seed` of one experiment in group "g": the test run's loss raised by `seed` tenths, so
// that at every step the members' losses are known apart.
RunRecord member(int seed) {
    RunRecord run = chart_test_run(QStringLiteral("cnn batch 64 seed %1").arg(seed), steps);
    run.group = QStringLiteral("g");
    for (MetricPoint& point : run.curve(Metric::TrainLoss))
        point.value += 0.1 * seed;
    return run;
}

QList<QPointF> points_of(ChartGrid& grid, const QString& key) {
    return grid.chart(ChartKind::TrainLoss).seriesPoints(key);
}

// The loss of seed `seed` at step index `i`.
double loss(int seed, int i) {
    const RunRecord run = member(seed);
    return run.curve(Metric::TrainLoss)[std::size_t(i)].value;
}

}  // namespace

class TestChartGroups : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        charts_ = std::make_unique<ChartTestGrid>();
        QVERIFY(charts_->showLaidOut());
        charts_->grid.setSmoothing(0.0);
        for (const int seed : {1, 2, 3})
            ids_.push_back(charts_->runs.add(member(seed)));
        charts_->runs.add(chart_test_run(QStringLiteral("alone"), steps));
        charts_->grid.redrawNow();
    }

    void cleanup() {
        charts_.reset();
        ids_.clear();
    }

    // Seeds 1, 2, 3 add 0.1, 0.2, 0.3: the mean adds 0.2 and one standard deviation is 0.1.
    void groupIsItsMeanWithABand() {
        ChartGrid& grid = charts_->grid;
        const QList<QPointF> mean = points_of(grid, ChartGrid::groupKey("g", GroupPart::Mean));
        QCOMPARE(mean.size(), steps);
        for (int i = 0; i < steps; ++i)
            QVERIFY(std::abs(mean[i].y() - loss(2, i)) < 1e-12);
        const QList<QPointF> band = points_of(grid, ChartGrid::groupKey("g", GroupPart::Band));
        QCOMPARE(band.size(), 2 * steps);  // the top edge, then the bottom edge backwards
        QVERIFY(std::abs(band.front().y() - (loss(2, 0) + 0.1)) < 1e-12);
        QVERIFY(std::abs(band.back().y() - (loss(2, 0) - 0.1)) < 1e-12);

        const ChartSurface& loss_chart = grid.chart(ChartKind::TrainLoss);
        const QString mean_key = ChartGrid::groupKey("g", GroupPart::Mean);
        QCOMPARE(loss_chart.seriesLegend(mean_key), QStringLiteral("cnn batch 64 (3 seeds)"));
        QCOMPARE(loss_chart.seriesStyle(mean_key)->colour,
                 run_colour(charts_->runs.find(ids_.front())->colour));
        QVERIFY(loss_chart.seriesLegend(ChartGrid::groupKey("g", GroupPart::Band)).isEmpty());
        // The members are not drawn on their own; the run outside the group is.
        for (const int id : ids_)
            QVERIFY(!loss_chart.hasSeries(ChartGrid::seriesKey(id, SeriesPart::Curve)));
        QVERIFY(loss_chart.hasSeries(ChartGrid::seriesKey(ids_.back() + 1, SeriesPart::Curve)));
    }

    void bandIsAChoice() {
        ChartGrid& grid = charts_->grid;
        const QString band_key = ChartGrid::groupKey("g", GroupPart::Band);
        grid.setBand(GroupBand::MinMax);
        grid.redrawNow();
        QVERIFY(std::abs(points_of(grid, band_key).front().y() - loss(3, 0)) < 1e-12);
        QVERIFY(std::abs(points_of(grid, band_key).back().y() - loss(1, 0)) < 1e-12);
        grid.setBand(GroupBand::Off);
        grid.redrawNow();
        QVERIFY(!grid.chart(ChartKind::TrainLoss).hasSeries(band_key));
        QVERIFY(
            grid.chart(ChartKind::TrainLoss).hasSeries(ChartGrid::groupKey("g", GroupPart::Mean)));
    }

    // Each member is smoothed as a run would be; on shared steps their mean is the mean of that.
    void smoothingAppliesToTheMean() {
        ChartGrid& grid = charts_->grid;
        grid.setSmoothing(0.6);
        grid.redrawNow();
        std::vector<std::vector<double>> smoothed;
        for (const int seed : {1, 2, 3}) {
            std::vector<double> ys;
            const RunRecord run = member(seed);
            for (const MetricPoint& point : run.curve(Metric::TrainLoss))
                ys.push_back(point.value);
            smoothed.push_back(smooth_ema(ys, 0.6));
        }
        const QList<QPointF> mean = points_of(grid, ChartGrid::groupKey("g", GroupPart::Mean));
        for (int i = 0; i < steps; ++i) {
            const std::size_t at = std::size_t(i);
            const double expected = (smoothed[0][at] + smoothed[1][at] + smoothed[2][at]) / 3;
            QVERIFY(std::abs(mean[i].y() - expected) < 1e-12);
        }
    }

    void membersOnRequest() {
        ChartGrid& grid = charts_->grid;
        grid.setMembersShown(true);
        grid.redrawNow();
        const ChartSurface& loss_chart = grid.chart(ChartKind::TrainLoss);
        const QColor group_colour = run_colour(charts_->runs.find(ids_.front())->colour);
        for (const int id : ids_) {
            const QString key = ChartGrid::seriesKey(id, SeriesPart::Curve);
            QVERIFY(loss_chart.hasSeries(key));
            QVERIFY(loss_chart.seriesStyle(key)->faint);
            QCOMPARE(loss_chart.seriesStyle(key)->colour, group_colour);
            QVERIFY(loss_chart.seriesLegend(key).isEmpty());
        }
        grid.setMembersShown(false);
        grid.redrawNow();
        QVERIFY(!loss_chart.hasSeries(ChartGrid::seriesKey(ids_.front(), SeriesPart::Curve)));
    }

    // With one member left shown, the group is a run again, under its own name.
    void oneShownMemberIsARun() {
        ChartGrid& grid = charts_->grid;
        charts_->runs.setVisible(ids_[0], false);
        charts_->runs.setVisible(ids_[1], false);
        grid.redrawNow();
        const ChartSurface& loss_chart = grid.chart(ChartKind::TrainLoss);
        QVERIFY(!loss_chart.hasSeries(ChartGrid::groupKey("g", GroupPart::Mean)));
        QVERIFY(!loss_chart.hasSeries(ChartGrid::groupKey("g", GroupPart::Band)));
        QCOMPARE(loss_chart.seriesLegend(ChartGrid::seriesKey(ids_[2], SeriesPart::Curve)),
                 QStringLiteral("cnn batch 64 seed 3"));
        charts_->runs.setVisible(ids_[0], true);
        grid.redrawNow();
        QCOMPARE(loss_chart.seriesLegend(ChartGrid::groupKey("g", GroupPart::Mean)),
                 QStringLiteral("cnn batch 64 (2 seeds)"));
        QVERIFY(!loss_chart.hasSeries(ChartGrid::seriesKey(ids_[2], SeriesPart::Curve)));
    }

    // A group's curves are kept from redraw to redraw, and computed again when what they come
    // from changes: a member gets new points, the smoothing, the x axis or the band changes.
    void aGroupsCurveFollowsWhatItComesFrom() {
        ChartGrid& grid = charts_->grid;
        const QString mean_key = ChartGrid::groupKey("g", GroupPart::Mean);
        const QString band_key = ChartGrid::groupKey("g", GroupPart::Band);
        const QList<QPointF> before = points_of(grid, mean_key);
        emit charts_->runs.curvesChanged(ids_[0]);  // nothing new: the same curve
        grid.redrawNow();
        QCOMPARE(points_of(grid, mean_key), before);

        // RunCollection appends points only as its runs train; the test does it in place.
        for (const int id : ids_) {
            auto& loss = const_cast<RunRecord*>(charts_->runs.find(id))->curve(Metric::TrainLoss);
            loss.push_back(loss.back());
            loss.back().step += 1;
            loss.back().value = 5.0;
            emit charts_->runs.curvesChanged(id);
        }
        grid.redrawNow();
        QCOMPARE(points_of(grid, mean_key).size(), steps + 1);
        QCOMPARE(points_of(grid, mean_key).back(), QPointF(steps + 1, 5.0));

        grid.setSmoothing(0.5);
        grid.redrawNow();
        QVERIFY(points_of(grid, mean_key).back().y() < 5.0);

        grid.setXAxis(XAxis::Epoch);  // 100 steps to an epoch
        grid.redrawNow();
        QCOMPARE(points_of(grid, mean_key).back().x(), (steps + 1) / 100.0);

        const QList<QPointF> band = points_of(grid, band_key);
        grid.setBand(GroupBand::Off);
        grid.redrawNow();
        QVERIFY(!grid.chart(ChartKind::TrainLoss).hasSeries(band_key));
        grid.setBand(GroupBand::StdDev);
        grid.redrawNow();
        QCOMPARE(points_of(grid, band_key), band);
    }

    // The legend under the grid lists the group once, where its first member would be.
    // A member's targets reached are not written over the group's line (the table's group row
    // times the group), a member's divergence is.
    void aMembersTroubleIsWrittenItsTargetsAreNot() {
        // Epochs of 25 steps: the accuracy has a point at epoch 1 for the note to sit on.
        RunRecord hot = chart_test_run(QStringLiteral("cnn batch 64 seed 4"), steps, 25);
        hot.group = QStringLiteral("g");
        hot.targets.push_back(
            {.target = 0.5, .seconds = 1.0, .step = 10, .epoch = 1, .images = 640});
        MetricPoint nan = hot.curve(Metric::TrainLoss).back();
        ++nan.step;
        nan.value = std::numeric_limits<double>::quiet_NaN();
        hot.curve(Metric::TrainLoss).push_back(nan);
        hot.state = RunState::Diverged;
        const int id = charts_->runs.add(std::move(hot));
        charts_->grid.redrawNow();
        ChartGrid& grid = charts_->grid;
        const QString note = ChartGrid::annotationKey(id, 0);
        QVERIFY(grid.chart(ChartKind::TrainLoss).hasSeries(note));  // "diverged at step ..."
        QVERIFY(!grid.chart(ChartKind::ValAccuracy).hasSeries(ChartGrid::annotationKey(id, 1)));
        QVERIFY(!grid.chart(ChartKind::ValAccuracy).hasSeries(note));
        // Alone, the same run writes both.
        charts_->runs.setVisible(ids_[0], false);
        charts_->runs.setVisible(ids_[1], false);
        charts_->runs.setVisible(ids_[2], false);
        grid.redrawNow();
        QVERIFY(grid.chart(ChartKind::ValAccuracy).hasSeries(ChartGrid::annotationKey(id, 1)));
    }

    void sharedLegendListsTheGroupOnce() {
        ChartGrid& grid = charts_->grid;
        grid.resize(300, 900);  // too narrow for the charts' own legends
        QCoreApplication::processEvents();
        grid.redrawNow();
        std::vector<QString> names;
        for (const ChartLegend::Entry& entry : grid.sharedLegend().entries())
            names.push_back(entry.name);
        QCOMPARE(names, (std::vector<QString>{"cnn batch 64 (3 seeds)", "alone"}));
    }

  private:
    std::unique_ptr<ChartTestGrid> charts_;
    std::vector<int> ids_;
};

QTEST_MAIN(TestChartGroups)
#include "test_chart_groups.moc"
