#include <QLabel>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QtTest>

#include <cmath>

#include "../app/run_fixtures.h"
#include "run_collection.h"
#include "run_controller.h"
#include "scaling_view.h"

using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::ScalingGroup;
using scalelab::ScalingView;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

class TestScalingView : public QObject {
    Q_OBJECT

  private slots:
    void without_a_group_it_explains_how_to_get_one() {
        RunController controller;
        RunCollection runs(controller);
        runs.add(fixture_run(fixture_spec(2), "alone", 2000, {0.8}));
        ScalingView view(runs);
        view.resize(900, 500);
        view.show();
        QVERIFY(view.groups().empty());
        const auto* empty = view.findChild<QLabel*>(QStringLiteral("emptyState"));
        QVERIFY(empty != nullptr);
        QVERIFY(empty->isVisible());
        QVERIFY(empty->text().contains(QStringLiteral("different device counts")));
        QVERIFY(!view.chart().widget()->isVisible());
    }

    void draws_each_group_with_its_ideal_line_and_efficiencies() {
        RunController controller;
        RunCollection runs(controller);
        ScalingView view(runs);
        view.resize(900, 500);
        view.show();

        runs.add(fixture_run(fixture_spec(1), "one", 1000, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "two", 1800, {0.8}));
        runs.add(fixture_run(fixture_spec(2), "two again", 2000, {0.8}));
        runs.add(fixture_run(fixture_spec(4), "four", 3400, {0.8}));
        runs.add(fixture_run(fixture_spec(2, 0.3), "other lr, 2", 2000, {0.8}));
        const int other_four =
            runs.add(fixture_run(fixture_spec(4, 0.3), "other lr, 4", 3000, {0.8}));
        // Redrawn on the timer, not on every change.
        QVERIFY(view.groups().empty());
        QTRY_COMPARE(view.groups().size(), std::size_t(2));
        QVERIFY(view.chart().widget()->isVisible());

        // The first group has a 1-device run: its ideal is devices × 1000 images/s. The
        // second has none: no ideal line, no efficiency.
        QVERIFY(view.chart().hasSeries(ScalingView::pointsKey(0)));
        QVERIFY(view.chart().hasSeries(ScalingView::idealKey(0)));
        QCOMPARE(ScalingView::idealLine(view.groups()[0]),
                 (QList<QPointF>{QPointF(1, 1000), QPointF(2, 2000), QPointF(4, 4000)}));
        QVERIFY(view.chart().hasSeries(ScalingView::pointsKey(1)));
        QVERIFY(!view.chart().hasSeries(ScalingView::idealKey(1)));
        // One point per device count: the two 2-device runs are one point with a bar.
        QCOMPARE(view.chart().seriesPoints(ScalingView::pointsKey(0)),
                 (QList<QPointF>{QPointF(1, 1000), QPointF(2, 1900), QPointF(4, 3400)}));
        // The bar spans one sample standard deviation either side: 200 / sqrt(2) for two runs.
        const double stddev = 200.0 / std::sqrt(2.0);
        QCOMPARE(view.chart().seriesPoints(ScalingView::spreadKey(0, 1)),
                 (QList<QPointF>{QPointF(2, 1900 - stddev), QPointF(2, 1900 + stddev)}));
        QVERIFY(!view.chart().hasSeries(ScalingView::spreadKey(0, 2)));

        const auto* list = view.findChild<QTreeWidget*>(QStringLiteral("scalingPoints"));
        QVERIFY(list != nullptr);
        QCOMPARE(list->topLevelItemCount(), 2);
        const QTreeWidgetItem* first = list->topLevelItem(0);
        QCOMPARE(first->text(0), view.groups()[0].label);
        QCOMPARE(first->childCount(), 3);
        QCOMPARE(first->child(1)->text(0), QStringLiteral("2 devices"));
        QCOMPARE(first->child(1)->text(1), QStringLiteral("1,900"));
        QCOMPARE(first->child(1)->text(2), QStringLiteral("95%"));  // 1900 / (2 × 1000)
        QCOMPARE(first->child(1)->text(3), QStringLiteral("2 runs"));
        QCOMPARE(first->child(2)->text(2), QStringLiteral("85%"));  // 3400 / (4 × 1000)
        const QTreeWidgetItem* second = list->topLevelItem(1);
        QCOMPARE(second->child(1)->text(2), QStringLiteral("—"));
        QCOMPARE(second->child(1)->text(3), QStringLiteral("other lr, 4"));
        QVERIFY(second->toolTip(0).contains(QStringLiteral("No 1-device run to compare with")));

        // A group that loses a device count goes, and its series with it.
        runs.remove(other_four);
        QTRY_COMPARE(view.groups().size(), std::size_t(1));
        QVERIFY(!view.chart().hasSeries(ScalingView::pointsKey(1)));
        QCOMPARE(list->topLevelItemCount(), 1);
        // A hidden run is not part of any group.
        runs.setVisible(runs.ids().front(), false);
        QTRY_VERIFY(!view.groups().front().has_baseline());
        QVERIFY(!view.chart().hasSeries(ScalingView::idealKey(0)));
    }
};

QTEST_MAIN(TestScalingView)
#include "test_scaling_view.moc"
