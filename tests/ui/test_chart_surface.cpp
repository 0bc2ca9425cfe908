#include <QAbstractScrollArea>
#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QGraphicsItem>
#include <QImage>
#include <QLogValueAxis>
#include <QMouseEvent>
#include <QPainter>
#include <QSvgGenerator>
#include <QValueAxis>
#include <QtTest>

#include <memory>

#include "chart_surface.h"
#include "colour_contrast.h"
#include "qt_charts_surface.h"
#include "rect_text.h"

using scalelab::ChartSurface;
using scalelab::LabelFit;
using scalelab::make_chart_surface;
using scalelab::QtChartsSurface;
using scalelab::SeriesStyle;
using scalelab::testing::rect_text;

namespace {

const QColor label_colour(200, 30, 160);
const QSize chart_size(600, 400);

QChart* chart_of(ChartSurface& surface) {
    return qobject_cast<QChartView*>(surface.widget())->chart();
}

// The range an axis shows, linear or logarithmic.
std::pair<qreal, qreal> range_of(QAbstractAxis* axis) {
    if (auto* linear = qobject_cast<QValueAxis*>(axis))
        return {linear->min(), linear->max()};
    auto* log = qobject_cast<QLogValueAxis*>(axis);
    return {log->min(), log->max()};
}

std::pair<qreal, qreal> x_range(ChartSurface& surface) {
    return range_of(chart_of(surface)->axes(Qt::Horizontal).front());
}

std::pair<qreal, qreal> y_range(ChartSurface& surface) {
    return range_of(chart_of(surface)->axes(Qt::Vertical).front());
}

// The chart rendered as for a PNG export.
QImage rendered(ChartSurface& surface) {
    QImage image(chart_size, QImage::Format_ARGB32);
    image.fill(Qt::white);
    QPainter painter(&image);
    surface.render(painter, QRectF(QPointF(0, 0), chart_size));
    return image;
}

bool near(QColor pixel, QColor colour) {
    return std::abs(pixel.red() - colour.red()) < 12 &&
           std::abs(pixel.green() - colour.green()) < 12 &&
           std::abs(pixel.blue() - colour.blue()) < 12;
}

// The pixels close to `colour`, and the smallest rectangle around them.
// The plot area once the chart has laid itself out again (from the event loop), after adding
// `runs` blue curves named `name` with %1 their number.
QRectF laid_out_plot(ChartSurface& surface, int runs = 0, const QString& name = {}) {
    const SeriesStyle blue{
        .colour = Qt::blue, .width = 2.0, .faint = false, .dashed = false, .markers = false};
    for (int i = 0; i < runs; ++i)
        surface.setSeries(QStringLiteral("run %1").arg(i), name.arg(i), {{1.0, 0.5}}, blue);
    surface.fitAxes();
    QCoreApplication::processEvents();
    return chart_of(surface)->plotArea();
}

struct ColourFound {
    int count = 0;
    QRect bounds;
};

ColourFound find_colour(const QImage& image, QColor colour) {
    ColourFound found;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x)
            if (near(image.pixelColor(x, y), colour)) {
                ++found.count;
                found.bounds |= QRect(x, y, 1, 1);
            }
    return found;
}

void render_at(ChartSurface& surface, QSize size) {
    QImage image(size, QImage::Format_ARGB32);
    QPainter painter(&image);
    surface.render(painter, QRectF(QPointF(0, 0), size));
}

QByteArray svg_of(ChartSurface& surface, QSize size) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    QSvgGenerator svg;
    svg.setOutputDevice(&buffer);
    svg.setSize(size);
    svg.setViewBox(QRect(QPoint(0, 0), size));
    {
        QPainter painter(&svg);
        surface.render(painter, QRectF(QPointF(0, 0), size));
    }
    return buffer.data();
}

// Twelve labels with long texts at nearly one point near the top right corner, and one at each
// other corner.
void add_crowded_labels(ChartSurface& surface) {
    const SeriesStyle style{
        .colour = label_colour, .width = 2.0, .faint = false, .dashed = false, .markers = true};
    for (int i = 0; i < 12; ++i)
        surface.setLabel(
            QStringLiteral("crowd %1").arg(i), {9.8 + 0.01 * i, 0.98 - 0.01 * i},
            QStringLiteral("run %1 reached 0.85 at epoch 3 (8.1 s) after warm-up").arg(i), style);
    surface.setLabel(QStringLiteral("bottom left"), {0.0, 0.0},
                     QStringLiteral("diverged at step 412"), style);
    surface.setLabel(QStringLiteral("top left"), {0.0, 1.0}, QStringLiteral("stalled at loss 2.3"),
                     style);
    surface.setLabel(QStringLiteral("bottom right"), {10.0, 0.0},
                     QStringLiteral("reached 0.70 at epoch 1"), style);
    surface.fitAxes();
}

// Every label of a drawing: inside its plot, off every other, its text whole or cut with an
// ellipsis (or, with no room left, none); those that left their dot's side say so.
void check_labels(const QtChartsSurface::DrawnLabels& drawn, std::size_t count) {
    QCOMPARE(drawn.labels.size(), count);
    int moved = 0;
    for (std::size_t i = 0; i < drawn.labels.size(); ++i) {
        const QtChartsSurface::DrawnLabel& label = drawn.labels[i];
        moved += label.placed.moved ? 1 : 0;
        if (label.placed.fit == LabelFit::Dropped) {
            QVERIFY(label.shown.isEmpty());
            continue;
        }
        QVERIFY2(drawn.plot.contains(label.placed.box),
                 qPrintable(rect_text(label.placed.box) + rect_text(drawn.plot)));
        if (label.placed.fit == LabelFit::Full)
            QCOMPARE(label.shown, label.text);
        else
            QVERIFY2(label.shown.endsWith(QChar(0x2026)) &&
                         label.text.startsWith(label.shown.chopped(1)),
                     qPrintable(label.shown));
        for (std::size_t j = i + 1; j < drawn.labels.size(); ++j)
            QVERIFY2(
                !label.placed.box.intersects(drawn.labels[j].placed.box),
                qPrintable(rect_text(label.placed.box) + rect_text(drawn.labels[j].placed.box)));
    }
    // At most four boxes fit beside a point: of twelve there, the others moved.
    QVERIFY2(moved >= 8, qPrintable(QString::number(moved)));
}

SeriesStyle line_style() {
    return SeriesStyle{
        .colour = Qt::darkGreen, .width = 2.0, .faint = false, .dashed = true, .markers = false};
}

SeriesStyle label_style() {
    return SeriesStyle{
        .colour = label_colour, .width = 2.0, .faint = false, .dashed = false, .markers = false};
}

// Counts the paint events of the object it filters.
class PaintCounter : public QObject {
  public:
    int count = 0;

    bool eventFilter(QObject*, QEvent* event) override {
        if (event->type() == QEvent::Paint)
            ++count;
        return false;
    }
};

}  // namespace

class TestChartSurface : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        surface_ = make_chart_surface();
        surface_->widget()->resize(chart_size);
        // The chart takes the view's size from the event loop: plot areas compare after it.
        surface_->widget()->show();
        QCoreApplication::processEvents();
        surface_->setSeries(QStringLiteral("curve"), QStringLiteral("a run"),
                            {{0.0, 0.0}, {5.0, 0.4}, {10.0, 1.0}}, line_style());
    }

    void cleanup() { surface_.reset(); }

    void horizontalLineSpansTheWidthAndSharesTheKeys() {
        surface_->setHorizontalLine(QStringLiteral("batch"), 0.5, line_style());
        surface_->fitAxes();
        QVERIFY(surface_->hasSeries(QStringLiteral("batch")));
        const auto [min_x, max_x] = x_range(*surface_);
        QCOMPARE(surface_->seriesPoints(QStringLiteral("batch")),
                 QList<QPointF>({{min_x, 0.5}, {max_x, 0.5}}));
        QVERIFY(surface_->seriesLegend(QStringLiteral("batch")).isEmpty());

        surface_->removeSeries(QStringLiteral("batch"));
        QVERIFY(!surface_->hasSeries(QStringLiteral("batch")));
        QVERIFY(surface_->seriesPoints(QStringLiteral("batch")).isEmpty());
    }

    void labelIsOnePointAndSharesTheKeys() {
        surface_->setLabel(QStringLiteral("note"), {4.0, 0.3}, QStringLiteral("diverged"),
                           label_style());
        surface_->fitAxes();
        QVERIFY(surface_->hasSeries(QStringLiteral("note")));
        QCOMPARE(surface_->seriesPoints(QStringLiteral("note")), QList<QPointF>({{4.0, 0.3}}));
        QVERIFY(surface_->seriesLegend(QStringLiteral("note")).isEmpty());
        QCOMPARE(surface_->seriesStyle(QStringLiteral("note"))->colour, label_style().colour);

        surface_->removeSeries(QStringLiteral("note"));
        QVERIFY(!surface_->hasSeries(QStringLiteral("note")));
        QVERIFY(surface_->seriesPoints(QStringLiteral("note")).isEmpty());
        QVERIFY(!surface_->seriesStyle(QStringLiteral("note")).has_value());
    }

    void aKeyChangesKind() {
        surface_->setLabel(QStringLiteral("key"), {4.0, 0.3}, QStringLiteral("note"),
                           label_style());
        surface_->setSeries(QStringLiteral("key"), QStringLiteral("now a curve"),
                            {{1.0, 0.1}, {2.0, 0.2}}, label_style());
        surface_->fitAxes();
        QCOMPARE(surface_->seriesPoints(QStringLiteral("key")),
                 QList<QPointF>({{1.0, 0.1}, {2.0, 0.2}}));
        QCOMPARE(surface_->seriesLegend(QStringLiteral("key")), QStringLiteral("now a curve"));

        // A line keeps out of the legend even where the key had an entry.
        surface_->setHorizontalLine(QStringLiteral("key"), 0.5, line_style());
        surface_->fitAxes();
        QCOMPARE(surface_->seriesPoints(QStringLiteral("key")).size(), 2);
        QVERIFY(surface_->seriesLegend(QStringLiteral("key")).isEmpty());
    }

    // A series given again as it is costs no repaint (a redraw hands over every series of a
    // dirty run); one with anything changed is taken.
    void aSeriesGivenAgainUnchangedIsNotRepainted() {
        const QList<QPointF> points{{0.0, 0.0}, {5.0, 0.4}, {10.0, 1.0}};
        const QList<QPointF> low{{0.0, 0.0}, {10.0, 0.5}};
        const QList<QPointF> high{{0.0, 0.2}, {10.0, 1.1}};
        auto* view = qobject_cast<QAbstractScrollArea*>(surface_->widget());
        QVERIFY(view != nullptr);
        PaintCounter paints;
        view->viewport()->installEventFilter(&paints);
        const auto give = [&](const QString& legend, const SeriesStyle& style) {
            surface_->setSeries(QStringLiteral("curve"), legend, points, style);
            surface_->setBand(QStringLiteral("band"), low, high, style);
            surface_->fitAxes();
            QCoreApplication::processEvents();
        };
        for (int batch = 0; batch < 3; ++batch)  // drawn, then settled into the cached layer
            give(QStringLiteral("a run"), line_style());
        paints.count = 0;
        give(QStringLiteral("a run"), line_style());
        QCOMPARE(paints.count, 0);

        give(QStringLiteral("renamed"), line_style());
        QCOMPARE(surface_->seriesLegend(QStringLiteral("curve")), QStringLiteral("renamed"));
        QVERIFY(paints.count > 0);
        give(QStringLiteral("renamed"), label_style());
        QCOMPARE(surface_->seriesStyle(QStringLiteral("curve"))->colour, label_style().colour);
        QCOMPARE(surface_->seriesStyle(QStringLiteral("band"))->colour, label_style().colour);
        surface_->setBand(QStringLiteral("band"), low, points, label_style());
        QCOMPARE(surface_->seriesPoints(QStringLiteral("band")).front(), points.front());
    }

    void logXLeavesOutPointsAtOrBelowZero() {
        surface_->setSeries(QStringLiteral("curve"), QStringLiteral("a run"),
                            {{-1.0, 0.1}, {0.0, 0.2}, {1.0, 0.3}, {100.0, 0.4}}, line_style());
        surface_->setLabel(QStringLiteral("at zero"), {0.0, 0.2}, QStringLiteral("left out"),
                           label_style());
        surface_->setLabel(QStringLiteral("at ten"), {10.0, 0.2}, QStringLiteral("kept"),
                           label_style());
        surface_->setLogX(true);
        QVERIFY(surface_->logX());
        QCOMPARE(surface_->seriesPoints(QStringLiteral("curve")),
                 QList<QPointF>({{1.0, 0.3}, {100.0, 0.4}}));
        QVERIFY(surface_->seriesPoints(QStringLiteral("at zero")).isEmpty());
        QCOMPARE(surface_->seriesPoints(QStringLiteral("at ten")), QList<QPointF>({{10.0, 0.2}}));
        QVERIFY(qobject_cast<QLogValueAxis*>(chart_of(*surface_)->axes(Qt::Horizontal).front()));
        const auto [min_x, max_x] = x_range(*surface_);
        QVERIFY2(min_x > 0 && min_x <= 1.0 && max_x >= 100.0,
                 qPrintable(QStringLiteral("x from %1 to %2").arg(min_x).arg(max_x)));

        surface_->setLogX(false);
        QVERIFY(!surface_->logX());
        QCOMPARE(surface_->seriesPoints(QStringLiteral("curve")).size(), 4);
        QCOMPARE(surface_->seriesPoints(QStringLiteral("at zero")).size(), 1);
        QVERIFY(qobject_cast<QValueAxis*>(chart_of(*surface_)->axes(Qt::Horizontal).front()));
    }

    void logXAndLogYTogether() {
        surface_->setSeries(QStringLiteral("curve"), QStringLiteral("a run"),
                            {{32.0, 1000.0}, {0.0, 10.0}, {1024.0, -5.0}, {1024.0, 40.0}},
                            line_style());
        surface_->setLogX(true);
        surface_->setLogY(true);
        QCOMPARE(surface_->seriesPoints(QStringLiteral("curve")),
                 QList<QPointF>({{32.0, 1000.0}, {1024.0, 40.0}}));
        const auto [min_x, max_x] = x_range(*surface_);
        const auto [min_y, max_y] = y_range(*surface_);
        // Counts within two decades go in powers of two, one more where a point is within a
        // tenth of a power of the end: 32 = 2^5 and 1024 = 2^10, 40 = 2^5.3 and 1000 = 2^9.97.
        QCOMPARE(min_x, 16.0);
        QCOMPARE(max_x, 2048.0);
        QCOMPARE(min_y, 32.0);
        QCOMPARE(max_y, 2048.0);
        auto* x_axis = qobject_cast<QLogValueAxis*>(chart_of(*surface_)->axes(Qt::Horizontal)[0]);
        QCOMPARE(x_axis->base(), 2.0);

        // Wider spans, and fractions, go in powers of ten.
        surface_->setSeries(QStringLiteral("curve"), QStringLiteral("a run"),
                            {{3.0, 0.05}, {2000.0, 0.8}}, line_style());
        surface_->fitAxes();
        QCOMPARE(x_range(*surface_), std::make_pair(1.0, 10000.0));
        QCOMPARE(y_range(*surface_), std::make_pair(0.01, 1.0));
        QCOMPARE(x_axis->base(), 10.0);
    }

    void fitAxesIncludesTheHorizontalLinesYButNotItsWidth() {
        surface_->fitAxes();
        const auto x_before = x_range(*surface_);
        surface_->setHorizontalLine(QStringLiteral("batch"), 5.0, line_style());
        surface_->fitAxes();
        QCOMPARE(x_range(*surface_), x_before);
        QVERIFY(y_range(*surface_).second >= 5.0);
    }

    void fitAxesIncludesTheLabelsPoint() {
        surface_->setLabel(QStringLiteral("note"), {20.0, -2.0}, QStringLiteral("far out"),
                           label_style());
        surface_->fitAxes();
        QVERIFY(x_range(*surface_).second >= 20.0);
        QVERIFY(y_range(*surface_).first <= -2.0);
    }

    void labelIsDrawnInsideThePlot() {
        surface_->setLabel(QStringLiteral("note"), {10.0, 1.0}, QString(), label_style());
        surface_->fitAxes();
        const int dot = find_colour(rendered(*surface_), label_colour).count;
        QVERIFY2(dot > 10, qPrintable(QString::number(dot)));

        // At the top right corner: the text must turn to the left and down into the plot.
        surface_->setLabel(QStringLiteral("note"), {10.0, 1.0},
                           QStringLiteral("diverged at step 412"), label_style());
        surface_->fitAxes();
        const ColourFound found = find_colour(rendered(*surface_), label_colour);
        QVERIFY2(found.count > dot + 20, qPrintable(QString::number(found.count)));
        const QRectF plot = chart_of(*surface_)->plotArea();
        const qreal marker = 5.0;  // a dot on the edge reaches past it by its radius
        QVERIFY2(plot.adjusted(-marker, -marker, marker, marker).contains(QRectF(found.bounds)),
                 qPrintable(QStringLiteral("label at %1,%2 %3x%4")
                                .arg(found.bounds.x())
                                .arg(found.bounds.y())
                                .arg(found.bounds.width())
                                .arg(found.bounds.height())));
        // The text reaches left of the dot, which is on the right edge.
        QVERIFY(found.bounds.left() < plot.right() - 50);
    }

    void labelIsReadableOnTheDarkTheme() {
        surface_->setDarkTheme(true);
        // A white line right through the text.
        surface_->setHorizontalLine(QStringLiteral("white"), 0.5,
                                    SeriesStyle{.colour = Qt::white,
                                                .width = 3.0,
                                                .faint = false,
                                                .dashed = false,
                                                .markers = false});
        surface_->setLabel(QStringLiteral("note"), {5.0, 0.5},
                           QStringLiteral("diverged at step 412"), label_style());
        surface_->fitAxes();
        const QImage image = rendered(*surface_);
        const ColourFound found = find_colour(image, label_colour);
        QVERIFY(found.count > 20);
        // The text's box (past the dot on its left) hides the line.
        const QRect box = found.bounds.adjusted(12, 0, 0, 0);
        int light = 0;
        for (int y = box.top(); y <= box.bottom(); ++y)
            for (int x = box.left(); x <= box.right(); ++x)
                if (image.pixelColor(x, y).lightness() > 200)
                    ++light;
        QCOMPARE(light, 0);
    }

    void legendIsDrawnBelowThePlot() {
        const SeriesStyle red{
            .colour = Qt::red, .width = 2.0, .faint = false, .dashed = false, .markers = false};
        surface_->setSeries(QStringLiteral("curve"), QStringLiteral("a red run"),
                            {{0.0, 0.0}, {10.0, 1.0}}, red);
        surface_->fitAxes();
        QCOMPARE(surface_->seriesLegend(QStringLiteral("curve")), QStringLiteral("a red run"));
        QVERIFY(surface_->seriesLegend(QStringLiteral("no such key")).isEmpty());
        const QImage image = rendered(*surface_);
        // Under the plot, past the x axis' labels: only the legend draws there.
        const QRect below(0, int(chart_of(*surface_)->plotArea().bottom()) + 10, chart_size.width(),
                          chart_size.height());
        const ColourFound sample = find_colour(image.copy(below), Qt::red);
        QVERIFY2(sample.count > 10, qPrintable(QString::number(sample.count)));
        // The name, in dark text, right of the sample.
        int text = 0;
        for (int y = sample.bounds.top() - 5; y <= sample.bounds.bottom() + 5; ++y)
            for (int x = sample.bounds.right() + 1; x < sample.bounds.right() + 100; ++x)
                if (image.pixelColor(x, below.top() + y).lightness() < 120)
                    ++text;
        QVERIFY2(text > 20, qPrintable(QString::number(text)));

        surface_->setSeries(QStringLiteral("curve"), QString(), {{0.0, 0.0}, {10.0, 1.0}}, red);
        surface_->fitAxes();
        QVERIFY(surface_->seriesLegend(QStringLiteral("curve")).isEmpty());
        // The plot grows into the room the legend took, but not down to the legend's row.
        const QRect legend_row = sample.bounds.translated(below.topLeft()).adjusted(-5, -5, 5, 5);
        QCOMPARE(find_colour(rendered(*surface_).copy(legend_row), Qt::red).count, 0);
    }

    // Names that do not fit one row under a 600 px chart wrap into a second row there, the plot
    // keeping its width.
    void namesWrapIntoRowsUnderThePlot() {
        const QRectF one_name = laid_out_plot(*surface_);
        const QRectF rows =
            laid_out_plot(*surface_, 3, QStringLiteral("batch 2x256, lr 3.2, warm-up %1"));
        QCOMPARE(rows.width(), one_name.width());
        QVERIFY(rows.height() < one_name.height());

        const QImage image = rendered(*surface_);
        const QRect below(0, int(rows.bottom()) + 10, chart_size.width(), chart_size.height());
        const ColourFound samples = find_colour(image.copy(below), Qt::blue);
        QVERIFY2(samples.count > 10 * 3, qPrintable(QString::number(samples.count)));
        // Two rows: samples one line apart.
        const int line = QFontMetrics(QApplication::font()).height();
        QVERIFY2(samples.bounds.height() > line / 2 && samples.bounds.height() < 3 * line,
                 qPrintable(QString::number(samples.bounds.height())));
    }

    // Rows that would take more than a quarter of the chart's height, and a column more than a
    // quarter of its width, do not fit; the widget still lists what fits half its height.
    void manyLongNamesDoNotFitAQuarterOfASmallChart() {
        surface_->widget()->resize(400, 250);
        surface_->setFontScale(1.5);
        const QRectF one_name = laid_out_plot(*surface_);
        QVERIFY(surface_->legendFits(1));
        const QRectF many_names =
            laid_out_plot(*surface_, 12, QStringLiteral("a rather long name for run number %1"));
        QVERIFY(!surface_->legendFits(1));
        QVERIFY(!surface_->legendFits(100));
        QCOMPARE(many_names.width(), one_name.width());
        const QRectF legend = qt_surface().legendArea();
        QVERIFY2(legend.top() > many_names.bottom() && legend.height() <= 250 / 2,
                 qPrintable(rect_text(legend)));
    }

    void aFewShortNamesFitOneRow() {
        laid_out_plot(*surface_, 2, QStringLiteral("run %1"));
        QVERIFY(surface_->legendFits(1));
        const QRectF legend = qt_surface().legendArea();
        QVERIFY2(legend.top() > chart_of(*surface_)->plotArea().bottom(),
                 qPrintable(rect_text(legend)));
        QVERIFY(legend.height() < QFontMetricsF(QApplication::font()).height() * 1.5);
    }

    // On charts from small to large, at both font scales, with one to twelve names short or
    // long: a legend that fits takes at most a quarter of the chart's height under the plot or a
    // quarter of its width beside it.
    void aLegendThatFitsTakesAQuarterOfItsChartAtMost() {
        for (const QSize size : {QSize(300, 200), QSize(400, 200), QSize(600, 400),
                                 QSize(1400, 260), QSize(500, 900), QSize(1000, 600)})
            for (const qreal scale : {1.0, 1.5})
                for (const int runs : {1, 4, 9, 12})
                    for (const QString& name : {QStringLiteral("run %1"),
                                                QStringLiteral("batch 2x256, lr 3.2, run %1")}) {
                        surface_->clearSeries();
                        surface_->widget()->resize(size);
                        surface_->setFontScale(scale);
                        const QRectF plot = laid_out_plot(*surface_, runs, name);
                        if (!surface_->legendFits(runs))
                            continue;
                        const QRectF legend = qt_surface().legendArea();
                        const bool below =
                            legend.top() > plot.bottom() && legend.height() <= size.height() / 4.0;
                        const bool beside =
                            legend.left() > plot.right() && legend.width() <= size.width() / 4.0;
                        QVERIFY2(below || beside,
                                 qPrintable(rect_text(legend) + rect_text(plot) + name.arg(runs)));
                    }
    }

    void aHiddenLegendIsStillInTheExport() {
        laid_out_plot(*surface_, 12, QStringLiteral("a rather long name for run number %1"));
        surface_->setLegendShown(false);
        QCoreApplication::processEvents();
        QVERIFY(qt_surface().legendArea().isEmpty());
        const QByteArray svg = svg_of(*surface_, QSize(400, 250));
        // Every name, elided in its middle to fit.
        QCOMPARE(svg.count(">a rather"), 12);
        for (int i = 0; i < 12; ++i)
            QVERIFY2(svg.contains(QStringLiteral("umber %1<").arg(i).toUtf8()),
                     qPrintable(QString::number(i)));
        // The widget keeps its chart without a legend.
        QVERIFY(qt_surface().legendArea().isEmpty());
        surface_->setLegendShown(true);
        QVERIFY(!qt_surface().legendArea().isEmpty());
    }

    void tickLabelsGrowWithTheFontScale() {
        const auto tick_size = [this] {
            return chart_of(*surface_)->axes(Qt::Horizontal).front()->labelsFont().pointSizeF();
        };
        const qreal normal = tick_size();
        surface_->setFontScale(1.5);
        QVERIFY2(tick_size() > normal * 1.4, qPrintable(QString::number(tick_size())));
        // A new axis and a new theme keep the scale.
        surface_->setLogX(true);
        surface_->setDarkTheme(true);
        QVERIFY2(tick_size() > normal * 1.4, qPrintable(QString::number(tick_size())));
        // Drawn larger: the x axis' labels under the plot reach further down.
        const auto ticks_height = [this] {
            const QImage image = rendered(*surface_);
            const QRectF plot = chart_of(*surface_)->plotArea();
            // Between the plot and the axis title: the tick labels, lighter than the background.
            int rows = 0;
            for (int y = int(plot.bottom()) + 3; y < int(plot.bottom()) + 40; ++y)
                for (int x = int(plot.left()); x < int(plot.right()); ++x)
                    if (image.pixelColor(x, y).lightness() > 150) {
                        ++rows;
                        break;
                    }
            return rows;
        };
        const int large = ticks_height();
        surface_->setFontScale(1.0);
        const int small = ticks_height();
        QVERIFY2(large > small, qPrintable(QStringLiteral("%1 against %2").arg(large).arg(small)));
    }

    // Twelve long labels at nearly one point at the plot's top right, and some at its other
    // corners: in the window and in an export, no two boxes overlap, each is inside the plot,
    // and each holds its text whole or elided.
    void crowdedLabelsNeverOverlap() {
        add_crowded_labels(*surface_);
        surface_->widget()->grab();  // a paint lays the labels out
        check_labels(qt_surface().drawnLabels(), 15);
        QVERIFY(chart_of(*surface_)->plotArea().contains(qt_surface().drawnLabels().plot));

        surface_->setFontScale(1.5);
        render_at(*surface_, QSize(1000, 600));
        check_labels(qt_surface().drawnLabels(), 15);
        QVERIFY(qt_surface().drawnLabels().plot.width() > chart_size.width());
    }

    // On a chart too small for them, labels keep their dots; resting the pointer on one whose
    // text is not all shown shows it whole.
    void aLabelWithoutRoomShowsItsTextOnTheDot() {
        surface_->widget()->resize(300, 200);
        add_crowded_labels(*surface_);
        surface_->widget()->grab();
        const std::vector<QtChartsSurface::DrawnLabel>& labels = qt_surface().drawnLabels().labels;
        const auto dropped = std::find_if(
            labels.begin(), labels.end(),
            [](const QtChartsSurface::DrawnLabel& l) { return l.placed.fit == LabelFit::Dropped; });
        QVERIFY(dropped != labels.end());
        const QString text = dropped->text;
        auto* view = qobject_cast<QChartView*>(surface_->widget());
        // Straight to the view, not through the window system: the scene turns it into hover
        // events whatever the pointer did before.
        const QPointF at = view->mapFromScene(dropped->dot);
        QMouseEvent move(QEvent::MouseMove, at, view->viewport()->mapToGlobal(at), Qt::NoButton,
                         Qt::NoButton, Qt::NoModifier);
        QCoreApplication::sendEvent(view->viewport(), &move);
        QStringList tips;
        for (const QGraphicsItem* item : view->scene()->items(dropped->dot))
            tips.append(item->toolTip().split(QLatin1Char('\n')));
        QVERIFY2(tips.contains(text), qPrintable(tips.join(" | ")));
    }

    // A label in a pale series colour is written dark enough to read on the chart (4.5:1).
    void aPaleLabelIsWrittenReadably() {
        SeriesStyle pale = label_style();
        pale.colour = QColor(0xf0, 0xe4, 0x42);  // 1.3:1 on white
        surface_->setLabel(QStringLiteral("note"), {5.0, 0.5},
                           QStringLiteral("reached 0.50 at epoch 1"), pale);
        surface_->fitAxes();
        auto* view = qobject_cast<QChartView*>(surface_->widget());
        const QImage image = view->grab().toImage();
        QCOMPARE(qt_surface().drawnLabels().labels.size(), std::size_t{1});
        const QRect box = view->mapFromScene(qt_surface().drawnLabels().labels[0].placed.box)
                              .boundingRect()
                              .adjusted(3, 3, -3, -3);  // inside its frame
        double darkest = 1.0;
        for (int y = box.top(); y <= box.bottom(); ++y)
            for (int x = box.left(); x <= box.right(); ++x)
                darkest = std::min(darkest, scalelab::relative_luminance(image.pixelColor(x, y)));
        QVERIFY2((1.0 + 0.05) / (darkest + 0.05) >= scalelab::text_contrast,
                 qPrintable(QString::number(darkest)));
    }

    void labelIsInTheSvgExport() {
        surface_->setLabel(QStringLiteral("note"), {5.0, 0.5},
                           QStringLiteral("diverged at step 412"), label_style());
        surface_->fitAxes();
        QVERIFY(svg_of(*surface_, chart_size).contains("diverged at step 412"));
    }

  private:
    QtChartsSurface& qt_surface() { return dynamic_cast<QtChartsSurface&>(*surface_); }

    std::unique_ptr<ChartSurface> surface_;
};

QTEST_MAIN(TestChartSurface)
#include "test_chart_surface.moc"
