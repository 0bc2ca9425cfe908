#include <QBuffer>
#include <QChart>
#include <QChartView>
#include <QImage>
#include <QLegendMarker>
#include <QLogValueAxis>
#include <QPainter>
#include <QSvgGenerator>
#include <QValueAxis>
#include <QtTest>

#include <memory>

#include "chart_surface.h"
#include "chart_test_runs.h"

using scalelab::ChartSurface;
using scalelab::make_chart_surface;
using scalelab::SeriesStyle;
using scalelab::testing::find_series;

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

// Whether the legend shows the series of `key`. The legend lays its markers out (and only then
// shows them) from the event loop.
bool legend_shows(ChartSurface& surface, const QString& key) {
    QCoreApplication::processEvents();
    QLineSeries* series = find_series(surface, key);
    if (series == nullptr)  // markers(nullptr) would be every marker
        return false;
    const QList<QLegendMarker*> markers = chart_of(surface)->legend()->markers(series);
    return !markers.isEmpty() && markers.front()->isVisible();
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

SeriesStyle line_style() {
    return SeriesStyle{
        .colour = Qt::darkGreen, .width = 2.0, .faint = false, .dashed = true, .markers = false};
}

SeriesStyle label_style() {
    return SeriesStyle{
        .colour = label_colour, .width = 2.0, .faint = false, .dashed = false, .markers = false};
}

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
        QVERIFY(!legend_shows(*surface_, QStringLiteral("batch")));

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
        QVERIFY(!legend_shows(*surface_, QStringLiteral("note")));
        // Nothing in the legend, so no Qt Charts series either: only what is drawn.
        QVERIFY(find_series(*surface_, QStringLiteral("note")) == nullptr);
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
        QVERIFY(legend_shows(*surface_, QStringLiteral("key")));

        // A line keeps out of the legend even where the key had an entry.
        surface_->setHorizontalLine(QStringLiteral("key"), 0.5, line_style());
        surface_->fitAxes();
        QCOMPARE(surface_->seriesPoints(QStringLiteral("key")).size(), 2);
        QVERIFY(!legend_shows(*surface_, QStringLiteral("key")));
        QVERIFY(find_series(*surface_, QStringLiteral("key")) == nullptr);
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

    void labelIsInTheSvgExport() {
        surface_->setLabel(QStringLiteral("note"), {5.0, 0.5},
                           QStringLiteral("diverged at step 412"), label_style());
        surface_->fitAxes();
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        QSvgGenerator svg;
        svg.setOutputDevice(&buffer);
        svg.setSize(chart_size);
        svg.setViewBox(QRect(QPoint(0, 0), chart_size));
        {
            QPainter painter(&svg);
            surface_->render(painter, QRectF(QPointF(0, 0), chart_size));
        }
        QVERIFY(buffer.data().contains("diverged at step 412"));
    }

  private:
    std::unique_ptr<ChartSurface> surface_;
};

QTEST_MAIN(TestChartSurface)
#include "test_chart_surface.moc"
