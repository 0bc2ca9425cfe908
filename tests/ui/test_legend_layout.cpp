#include <QtTest>

#include <limits>
#include <vector>

#include "legend_layout.h"

using scalelab::flow_rows;
using scalelab::LegendPlace;
using scalelab::LegendPlan;
using scalelab::LegendRow;
using scalelab::LegendSizes;
using scalelab::LegendSlot;
using scalelab::plan_legend;
using scalelab::plan_legend_rows;

namespace {

// An entry is 20 + its name wide; two entries of a row are 10 apart.
const LegendSizes sizes{.line = 10, .sample = 15, .gap = 5, .min_name = 60, .edge = 5};

std::vector<std::size_t> row_counts(const std::vector<LegendRow>& rows) {
    std::vector<std::size_t> counts;
    for (const LegendRow& row : rows)
        counts.push_back(row.count);
    return counts;
}

}  // namespace

class TestLegendLayout : public QObject {
    Q_OBJECT

  private slots:
    void entriesFlowIntoRowsInOrder() {
        const std::vector<LegendRow> rows = flow_rows({50, 50, 50, 120, 200}, 130, 10);
        QCOMPARE(row_counts(rows), std::vector<std::size_t>({2, 1, 1, 1}));
        QCOMPARE(rows[0].width, 110.0);
        QCOMPARE(rows[1].first, std::size_t(2));
        // Wider than a row: a row of its own.
        QCOMPARE(rows[3].width, 200.0);
    }

    void fewShortNamesTakeOneRowWhole() {
        const LegendPlan plan = plan_legend({40, 30}, QSizeF(400, 200), 150, sizes);
        QCOMPARE(plan.place, LegendPlace::Below);
        QCOMPARE(plan.rows.size(), std::size_t(1));
        QCOMPARE(plan.name_width, 40.0);
        QCOMPARE(plan.size.height(), sizes.line + sizes.gap);
    }

    // A quarter of 100 holds two rows; eight names whole would take four, three to a row three:
    // four to a row fit, with names elided to fill the row.
    void namesAreElidedAsLittleAsTwoRowsAllow() {
        const LegendPlan plan =
            plan_legend(std::vector<qreal>(8, 150), QSizeF(400, 100), 150, sizes);
        QCOMPARE(plan.place, LegendPlace::Below);
        QCOMPARE(row_counts(plan.rows), std::vector<std::size_t>({4, 4}));
        QCOMPARE(plan.name_width, (390.0 - 3 * 10) / 4 - 20);
        QVERIFY(plan.size.height() <= 100 / 4.0);
    }

    // Twelve names need three rows even elided to the shortest: a column at the plot's right,
    // a quarter of the chart wide at most, where it is tall enough.
    void namesGoBesideWhereRowsDoNotFit() {
        const std::vector<qreal> names(12, 40);
        const LegendPlan plan = plan_legend(names, QSizeF(400, 100), 150, sizes);
        QCOMPARE(plan.place, LegendPlace::Beside);
        QCOMPARE(plan.rows.size(), std::size_t(12));
        QCOMPARE(plan.name_width, 40.0);
        QVERIFY(plan.size.width() <= 400 / 4.0);
        QCOMPARE(plan.size.height(), 120.0);

        QCOMPARE(plan_legend(names, QSizeF(400, 100), 100, sizes).place, LegendPlace::Nowhere);
    }

    void namesThatWouldBeCutTooShortFitNowhere() {
        QCOMPARE(plan_legend(std::vector<qreal>(8, 300), QSizeF(300, 100), 150, sizes).place,
                 LegendPlace::Nowhere);
        QCOMPARE(plan_legend({}, QSizeF(300, 200), 150, sizes).place, LegendPlace::Nowhere);
    }

    void rowsWithoutRoomTakeTheHeightAllowed() {
        const std::vector<qreal> names(12, 200);
        const qreal unbounded = std::numeric_limits<qreal>::infinity();
        const LegendPlan all = plan_legend_rows(names, 400, unbounded, sizes);
        QCOMPARE(all.place, LegendPlace::Below);
        QCOMPARE(all.name_width, sizes.min_name);
        QCOMPARE(row_counts(all.rows), std::vector<std::size_t>({4, 4, 4}));
        QCOMPARE(all.size.height(), 35.0);
        QCOMPARE(plan_legend_rows(names, 400, 25, sizes).rows.size(), std::size_t(2));
        QCOMPARE(plan_legend_rows(names, 400, 5, sizes).place, LegendPlace::Nowhere);
    }

    void aRowsEntriesSitSideBySide() {
        const std::vector<LegendSlot> places = scalelab::place_legend_row(
            {.first = 1, .count = 2, .width = 0}, QPointF(10, 20), {100, 30, 200}, 80, sizes);
        QCOMPARE(places.size(), std::size_t(2));
        QCOMPARE(places[0].sample, QLineF(10, 25, 25, 25));
        QCOMPARE(places[0].name_box, QRectF(30, 20, 30, 10));
        QCOMPARE(places[1].sample, QLineF(70, 25, 85, 25));
        QCOMPARE(places[1].name_box, QRectF(90, 20, 80, 10));
    }
};

QTEST_MAIN(TestLegendLayout)
#include "test_legend_layout.moc"
