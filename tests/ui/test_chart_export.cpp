#include <QImage>
#include <QTemporaryDir>
#include <QXmlStreamReader>
#include <QtTest>

#include <memory>
#include <vector>

#include "chart_export.h"
#include "chart_grid.h"
#include "chart_test_runs.h"
#include "run_collection.h"
#include "run_palette.h"

using scalelab::ChartGrid;
using scalelab::ChartKind;
using scalelab::Metric;
using scalelab::testing::chart_test_run;
using scalelab::testing::ChartTestGrid;

namespace {

// Every piece of text an SVG draws, or an empty list and `error` when it does not parse.
QStringList svg_texts(const QString& path, QString* error) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        *error = file.errorString();
        return {};
    }
    QXmlStreamReader xml(&file);
    QStringList texts;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement() && xml.name() == QLatin1String("text"))
            texts.append(xml.readElementText(QXmlStreamReader::IncludeChildElements).simplified());
    }
    if (xml.hasError()) {
        *error = xml.errorString();
        return {};
    }
    return texts;
}

// How many pixels are close to `colour`: the curves were drawn, in their runs' colours.
int pixels_near(const QImage& image, QColor colour) {
    int count = 0;
    for (int y = 0; y < image.height(); ++y)
        for (int x = 0; x < image.width(); ++x) {
            const QColor pixel = image.pixelColor(x, y);
            if (std::abs(pixel.red() - colour.red()) < 12 &&
                std::abs(pixel.green() - colour.green()) < 12 &&
                std::abs(pixel.blue() - colour.blue()) < 12)
                ++count;
        }
    return count;
}

}  // namespace

class TestChartExport : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        charts_ = std::make_unique<ChartTestGrid>();
        // Far from the export size: the export must not depend on it.
        charts_->grid.resize(700, 450);
        first_ = charts_->runs.add(chart_test_run("alpha-run", 400, 100, 1.0));
        auto beta = chart_test_run("beta-run", 400, 100);
        for (const Metric metric : {Metric::TrainLoss, Metric::LearningRate})
            for (auto& point : beta.curve(metric))
                point.value *= 1.5;
        second_ = charts_->runs.add(std::move(beta));
        charts_->grid.redrawNow();
        QVERIFY(dir_.isValid());
    }

    void cleanup() { charts_.reset(); }

    void chartPngHasTheChartSizeTimesTheScale() {
        const QSize shown = charts_->grid.chart(ChartKind::TrainLoss).widget()->size();
        for (const int scale : {1, 2}) {
            const QString path = dir_.filePath(QStringLiteral("loss-%1x.png").arg(scale));
            QString error;
            QVERIFY2(scalelab::export_chart_png(charts_->grid.chart(ChartKind::TrainLoss), path,
                                                scale, &error),
                     qPrintable(error));
            const QImage image(path);
            QVERIFY(!image.isNull());
            QCOMPARE(image.size(), QSize(1000, 600) * scale);
            const QColor colour = scalelab::run_colour(charts_->runs.find(first_)->colour);
            QVERIFY(pixels_near(image, colour) > 1000 * scale);
        }
        QCOMPARE(charts_->grid.chart(ChartKind::TrainLoss).widget()->size(), shown);
    }

    void gridPngIsTwoByTwoCharts() {
        for (const int scale : {1, 2}) {
            const QString path = dir_.filePath(QStringLiteral("grid-%1x.png").arg(scale));
            QString error;
            QVERIFY2(scalelab::export_grid_png(charts_->grid, path, scale, &error),
                     qPrintable(error));
            const QImage image(path);
            QCOMPARE(image.size(), QSize(2000, 1200) * scale);
            // The learning-rate chart, bottom right, is drawn too.
            const QImage bottom_right =
                image.copy(QRect(QPoint(1000, 600) * scale, QSize(1000, 600) * scale));
            const QColor colour = scalelab::run_colour(charts_->runs.find(second_)->colour);
            QVERIFY(pixels_near(bottom_right, colour) > 500 * scale);
        }
    }

    // The charts the grid shows, in its rows: five are three over two, one is one.
    void gridPngHasTheShownCharts() {
        const std::vector<ChartKind> five(scalelab::all_chart_kinds.begin(),
                                          scalelab::all_chart_kinds.end());
        QVERIFY(charts_->grid.setShownCharts(five));
        const QString path = dir_.filePath(QStringLiteral("five.png"));
        QString error;
        QVERIFY2(scalelab::export_grid_png(charts_->grid, path, 1, &error), qPrintable(error));
        QCOMPARE(QImage(path).size(), QSize(3000, 1200));

        QVERIFY(charts_->grid.setShownCharts({ChartKind::LearningRate}));
        QVERIFY2(scalelab::export_grid_png(charts_->grid, path, 1, &error), qPrintable(error));
        const QImage one(path);
        QCOMPARE(one.size(), QSize(1000, 600));
        const QColor colour = scalelab::run_colour(charts_->runs.find(second_)->colour);
        QVERIFY(pixels_near(one, colour) > 500);
    }

    void chartSvgHasTitleLegendAndAxisTitles() {
        const QString path = dir_.filePath(QStringLiteral("loss.svg"));
        QString error;
        QVERIFY2(
            scalelab::export_chart_svg(charts_->grid.chart(ChartKind::TrainLoss), path, &error),
            qPrintable(error));
        const QStringList texts = svg_texts(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        for (const QString& expected : {QStringLiteral("alpha-run"), QStringLiteral("beta-run"),
                                        ChartGrid::title(ChartKind::TrainLoss),
                                        QStringLiteral("Step"), QStringLiteral("Loss")})
            QVERIFY2(texts.contains(expected), qPrintable(expected + " missing from the SVG"));
        // The curves are vectors, not a picture of them.
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray svg = file.readAll();
        QVERIFY(svg.count("<polyline") >= 4);
        QVERIFY(!svg.contains("<image"));
    }

    void gridSvgHasEveryChart() {
        const QString path = dir_.filePath(QStringLiteral("grid.svg"));
        QString error;
        QVERIFY2(scalelab::export_grid_svg(charts_->grid, path, &error), qPrintable(error));
        const QStringList texts = svg_texts(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        for (const ChartKind kind : charts_->grid.shownCharts())
            QVERIFY2(texts.contains(ChartGrid::title(kind)),
                     qPrintable(ChartGrid::title(kind) + " missing from the SVG"));
        // Hidden on screen, left out of the export.
        QVERIFY(!texts.contains(ChartGrid::title(ChartKind::NoiseScale)));
        QVERIFY(texts.count(QStringLiteral("alpha-run")) >= 4);
        QVERIFY(texts.contains(QStringLiteral("Images/s")));
    }

    // Eight runs, six with long names that reach their target at the same point: the window
    // lists them under its grid (or not at all), but each exported chart lists every run, and
    // the accuracy chart has each target's label.
    void everyExportedChartListsEveryRun() {
        const QStringList words = {QStringLiteral("gamma"),   QStringLiteral("delta"),
                                   QStringLiteral("epsilon"), QStringLiteral("zeta"),
                                   QStringLiteral("eta"),     QStringLiteral("theta")};
        for (const QString& word : words) {
            auto run = chart_test_run(
                word + QStringLiteral(": batch 2x256, lr 3.2, warm-up 5 epochs"), 400, 100);
            run.targets.push_back(
                {.target = 0.5, .seconds = 1.0, .step = 100, .epoch = 1, .images = 6400});
            charts_->runs.add(std::move(run));
        }
        QVERIFY(charts_->grid.setFontScale(1.5));
        charts_->grid.redrawNow();
        charts_->grid.setLegendShown(false);

        const QString path = dir_.filePath(QStringLiteral("crowded.svg"));
        QString error;
        QVERIFY2(scalelab::export_grid_svg(charts_->grid, path, &error), qPrintable(error));
        const QStringList texts = svg_texts(path, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const int charts = int(charts_->grid.shownCharts().size());
        QCOMPARE(texts.count(QStringLiteral("alpha-run")), charts);
        QCOMPARE(texts.count(QStringLiteral("beta-run")), charts);
        for (const QString& word : words) {
            // Whole or elided in the middle, by their beginning and end.
            const QStringList named =
                texts.filter(QRegularExpression(QStringLiteral("^%1: batch.*epochs$").arg(word)));
            QVERIFY2(named.size() == charts, qPrintable(word + ": " + named.join(" | ")));
        }
        QCOMPARE(texts.filter(QStringLiteral("reached 0.50 at epoch 1")).size(), 6);
    }

    void aMissingFolderIsNamedInTheError() {
        const QString path = dir_.filePath(QStringLiteral("no-such-folder/loss.png"));
        QString error;
        QVERIFY(!scalelab::export_chart_png(charts_->grid.chart(ChartKind::TrainLoss), path, 1,
                                            &error));
        QVERIFY2(error.contains(path), qPrintable(error));
        QVERIFY2(error.contains(QStringLiteral("does not exist")), qPrintable(error));
        QVERIFY(!scalelab::export_grid_svg(charts_->grid, path, &error));
        QVERIFY2(error.contains(path), qPrintable(error));
    }

    void aFolderInPlaceOfTheFileIsAnError() {
        QString error;
        QVERIFY(!scalelab::export_grid_png(charts_->grid, dir_.path(), 1, &error));
        QVERIFY2(error.contains(dir_.path()), qPrintable(error));
    }

    // Each refusal in the words docs/errors.md gives (E-EXPORT-WRITE).
    void refusalsSayWhatIsWrong() {
        QString error;
        QVERIFY(!scalelab::export_grid_png(charts_->grid, QString(), 1, &error));
        QCOMPARE(error, QStringLiteral("No file name given for the export."));
        const QString path = dir_.filePath(QStringLiteral("no-such-folder/loss.png"));
        QVERIFY(!scalelab::export_grid_png(charts_->grid, path, 1, &error));
        QCOMPARE(error, QStringLiteral("Cannot write %1: the folder %2 does not exist.")
                            .arg(path, dir_.filePath(QStringLiteral("no-such-folder"))));
    }

    void onlyScalesOneAndTwo() {
        const QString path = dir_.filePath(QStringLiteral("loss-3x.png"));
        QString error;
        QVERIFY(!scalelab::export_chart_png(charts_->grid.chart(ChartKind::TrainLoss), path, 3,
                                            &error));
        QVERIFY2(error.contains(QStringLiteral("1 or 2")), qPrintable(error));
        QVERIFY(!QFile::exists(path));
    }

  private:
    QTemporaryDir dir_;
    std::unique_ptr<ChartTestGrid> charts_;
    int first_ = 0;
    int second_ = 0;
};

QTEST_MAIN(TestChartExport)
#include "test_chart_export.moc"
