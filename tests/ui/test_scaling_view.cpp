#include <QLabel>
#include <QStackedWidget>
#include <QTreeWidget>
#include <QtTest>

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
        runs.add(fixture_run(fixture_spec(2), "two", 1900, {0.8}));
        runs.add(fixture_run(fixture_spec(4), "four", 3400, {0.8}));
        runs.add(fixture_run(fixture_spec(2, 0.3), "other lr, 2", 2000, {0.8}));
        const int other_four =
            runs.add(fixture_run(fixture_spec(4, 0.3), "other lr, 4", 3000, {0.8}));
        // Redrawn on the timer, not on every change.
        QVERIFY(view.groups().empty());
        QTRY_COMPARE(view.groups().size(), std::size_t(2));
        QVERIFY(view.chart().widget()->isVisible());

        for (int index : {0, 1}) {
            QVERIFY(view.chart().hasSeries(ScalingView::pointsKey(index)));
            QVERIFY(view.chart().hasSeries(ScalingView::idealKey(index)));
        }
        // Linear from 1 device at 1000 images/s, and from 2 devices at 2000 images/s.
        QCOMPARE(ScalingView::idealLine(view.groups()[0]),
                 (QList<QPointF>{QPointF(1, 1000), QPointF(4, 4000)}));
        QCOMPARE(ScalingView::idealLine(view.groups()[1]),
                 (QList<QPointF>{QPointF(2, 2000), QPointF(4, 4000)}));

        const auto* list = view.findChild<QTreeWidget*>(QStringLiteral("scalingPoints"));
        QVERIFY(list != nullptr);
        QCOMPARE(list->topLevelItemCount(), 2);
        const QTreeWidgetItem* first = list->topLevelItem(0);
        QCOMPARE(first->text(0), view.groups()[0].label);
        QCOMPARE(first->childCount(), 3);
        QCOMPARE(first->child(1)->text(0), QStringLiteral("2 devices"));
        QCOMPARE(first->child(1)->text(1), QStringLiteral("1900"));
        QCOMPARE(first->child(1)->text(2), QStringLiteral("95%"));  // 1900 / (2 × 1000)
        QCOMPARE(first->child(2)->text(2), QStringLiteral("85%"));  // 3400 / (4 × 1000)
        QCOMPARE(list->topLevelItem(1)->child(1)->text(2),
                 QStringLiteral("75%"));  // 3000 / (2000 × 4 / 2)
        QCOMPARE(list->topLevelItem(1)->child(1)->text(3), QStringLiteral("other lr, 4"));

        // A group that loses a device count goes, and its series with it.
        runs.remove(other_four);
        QTRY_COMPARE(view.groups().size(), std::size_t(1));
        QVERIFY(!view.chart().hasSeries(ScalingView::pointsKey(1)));
        QVERIFY(!view.chart().hasSeries(ScalingView::idealKey(1)));
        QCOMPARE(list->topLevelItemCount(), 1);
    }
};

QTEST_MAIN(TestScalingView)
#include "test_scaling_view.moc"
