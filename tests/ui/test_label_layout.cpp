#include <QtTest>

#include <vector>

#include "label_layout.h"
#include "rect_text.h"

using scalelab::LabelFit;
using scalelab::LabelRequest;
using scalelab::LabelSpacing;
using scalelab::lay_out_labels;
using scalelab::PlacedLabel;
using scalelab::testing::rect_text;

namespace {

const QRectF plot(50, 30, 500, 300);
const LabelSpacing spacing{.dot_radius = 4.5, .gap = 2.0, .min_width = 60.0};
const QSizeF short_text(80, 18);

// What must hold of any layout: every label that keeps its text has a box inside the plot, of
// its height, as wide as asked (full) or narrower but not below the narrowest (elided); no two
// boxes overlap; no box covers a dot.
void check_layout(const std::vector<LabelRequest>& labels, const std::vector<PlacedLabel>& placed) {
    QCOMPARE(placed.size(), labels.size());
    for (std::size_t i = 0; i < placed.size(); ++i) {
        const QRectF& box = placed[i].box;
        if (placed[i].fit == LabelFit::Dropped) {
            QVERIFY(box.isEmpty());
            continue;
        }
        QVERIFY2(plot.contains(box), qPrintable(rect_text(box)));
        QCOMPARE(box.height(), labels[i].size.height());
        if (placed[i].fit == LabelFit::Full)
            QCOMPARE(box.width(), labels[i].size.width());
        else
            QVERIFY2(box.width() < labels[i].size.width() && box.width() >= spacing.min_width,
                     qPrintable(rect_text(box)));
        for (std::size_t j = 0; j < placed.size(); ++j) {
            if (j != i)
                QVERIFY2(!box.intersects(placed[j].box),
                         qPrintable(rect_text(box) + " and " + rect_text(placed[j].box)));
            const QPointF dot = labels[j].dot;
            const qreal r = spacing.dot_radius;
            QVERIFY2(!box.intersects(QRectF(dot - QPointF(r, r), QSizeF(2 * r, 2 * r))),
                     qPrintable(rect_text(box)));
        }
    }
}

// How many of the first `count` labels have a line from their dot to their box (they moved) that
// passes under another box.
int crossing_lines(const std::vector<LabelRequest>& labels, const std::vector<PlacedLabel>& placed,
                   std::size_t count) {
    int crossing = 0;
    for (std::size_t i = 0; i < count; ++i) {
        if (!placed[i].moved)
            continue;
        const QLineF line(labels[i].dot, scalelab::nearest_point(placed[i].box, labels[i].dot));
        for (std::size_t j = 0; j < placed.size(); ++j) {
            const QRectF& other = placed[j].box;
            if (j == i || other.isEmpty())
                continue;
            // Sampled finely: a line through a box has points inside it.
            for (int step = 1; step < 200; ++step)
                if (other.adjusted(0.5, 0.5, -0.5, -0.5).contains(line.pointAt(step / 200.0))) {
                    ++crossing;
                    break;
                }
        }
    }
    return crossing;
}

int count_fit(const std::vector<PlacedLabel>& placed, LabelFit fit) {
    return int(std::count_if(placed.begin(), placed.end(),
                             [fit](const PlacedLabel& label) { return label.fit == fit; }));
}

}  // namespace

class TestLabelLayout : public QObject {
    Q_OBJECT

  private slots:
    void aLoneLabelSitsRightOfItsDot() {
        const std::vector<LabelRequest> labels = {{.dot = {200, 100}, .size = short_text}};
        const std::vector<PlacedLabel> placed = lay_out_labels(plot, labels, spacing);
        check_layout(labels, placed);
        QCOMPARE(placed[0].fit, LabelFit::Full);
        QVERIFY(!placed[0].moved);
        QCOMPARE(placed[0].box.left(), 200 + spacing.dot_radius + spacing.gap);
        QCOMPARE(placed[0].box.center().y(), 100.0);
    }

    void aLabelAtTheRightEdgeTurnsLeft() {
        const std::vector<LabelRequest> labels = {
            {.dot = {plot.right(), plot.top()}, .size = short_text}};
        const std::vector<PlacedLabel> placed = lay_out_labels(plot, labels, spacing);
        check_layout(labels, placed);
        QVERIFY(placed[0].box.right() < plot.right());
        QVERIFY(!placed[0].moved);
    }

    void twoLabelsAtOnePointTakeTwoSides() {
        const std::vector<LabelRequest> labels = {{.dot = {200, 100}, .size = short_text},
                                                  {.dot = {201, 101}, .size = short_text}};
        const std::vector<PlacedLabel> placed = lay_out_labels(plot, labels, spacing);
        check_layout(labels, placed);
        QVERIFY(placed[0].box.left() > 200);
        QVERIFY(placed[1].box.right() < 201);
        QVERIFY(!placed[1].moved);
    }

    // Twelve long labels at nearly one point near the top right corner, and three at the other
    // corners: every one keeps at least part of its text, nothing overlaps, and those that had
    // to move away from their dot say so.
    void aCrowdedChartOverlapsNothing() {
        std::vector<LabelRequest> labels;
        for (int i = 0; i < 12; ++i)
            labels.push_back({.dot = {plot.right() - 3 + i * 0.2, plot.top() + 2 + i * 0.3},
                              .size = QSizeF(190 + 10 * i, 18)});
        labels.push_back({.dot = plot.bottomLeft(), .size = QSizeF(700, 18)});
        labels.push_back({.dot = plot.topLeft() + QPointF(1, 1), .size = short_text});
        labels.push_back({.dot = plot.bottomRight(), .size = short_text});
        const std::vector<PlacedLabel> placed = lay_out_labels(plot, labels, spacing);
        check_layout(labels, placed);
        QCOMPARE(count_fit(placed, LabelFit::Dropped), 0);
        // Wider than the plot: cut to it.
        QCOMPARE(placed[12].fit, LabelFit::Elided);
        // The stack of the twelve leaves their lines a way past its boxes. (The label at the
        // bottom right has none: the bottom left's, as wide as the plot, is above it.)
        QCOMPARE(crossing_lines(labels, placed, 12), 0);
        // At most four boxes can be beside one point: the others were moved and stacked.
        QVERIFY(std::count_if(placed.begin(), placed.begin() + 12,
                              [](const PlacedLabel& label) { return label.moved; }) >= 8);
    }

    // A plot one line high with a dot in its middle: a box as wide as two thirds of the plot
    // covers the dot wherever it goes, narrower ones fit on either side, and a third label finds
    // no room at all.
    void aFullPlotNarrowsThenDropsLabels() {
        const QRectF one_line(0, 0, 300, 18);
        const std::vector<LabelRequest> labels(3, {.dot = {150, 9}, .size = QSizeF(200, 18)});
        const std::vector<PlacedLabel> placed = lay_out_labels(one_line, labels, spacing);
        QCOMPARE(placed[0].fit, LabelFit::Elided);
        QCOMPARE(placed[1].fit, LabelFit::Elided);
        QCOMPARE(placed[2].fit, LabelFit::Dropped);
        QVERIFY(placed[0].box.left() > 150);
        QVERIFY(placed[1].box.right() < 150);
        QVERIFY(placed[0].box.width() >= spacing.min_width);
        for (const PlacedLabel& label : {placed[0], placed[1]})
            QVERIFY2(one_line.contains(label.box), qPrintable(rect_text(label.box)));
    }

    void aLabelTallerThanThePlotIsDropped() {
        const std::vector<LabelRequest> labels = {
            {.dot = {200, 100}, .size = QSizeF(80, plot.height() + 1)}};
        QCOMPARE(lay_out_labels(plot, labels, spacing)[0].fit, LabelFit::Dropped);
    }

    void theNearestPointOfABoxIsOnItsEdge() {
        const QRectF box(10, 10, 20, 10);
        QCOMPARE(scalelab::nearest_point(box, {0, 15}), QPointF(10, 15));
        QCOMPARE(scalelab::nearest_point(box, {40, 0}), QPointF(30, 10));
        QCOMPARE(scalelab::nearest_point(box, {15, 12}), QPointF(15, 12));
    }
};

QTEST_MAIN(TestLabelLayout)
#include "test_label_layout.moc"
