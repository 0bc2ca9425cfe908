#include <QAction>
#include <QApplication>
#include <QFile>
#include <QImage>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <vector>

#include "chart_grid.h"
#include "chart_surface.h"
#include "experiment_form.h"
#include "export_dialog.h"
#include "log_pane.h"
#include "main_window.h"
#include "run_collection.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "short_runs.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::endless_synthetic_run;
using scalelab::testing::on_next_dialog;
using scalelab::testing::short_synthetic_run;
using scalelab::testing::two_cpu_cores;
using scalelab::testing::WindowUnderTest;

namespace {

bool all_ended(const RunCollection& runs) {
    for (int id : runs.ids())
        if (is_active(runs.find(id)->state))
            return false;
    return !runs.ids().empty();
}

// The name the chart's legend lists a run's drawn (smoothed) line under; empty while it is not
// drawn.
QString run_legend(ChartSurface& chart, int id) {
    return chart.seriesLegend(ChartGrid::seriesKey(id, SeriesPart::Curve));
}

// Answers the next question box with `button` once it appears.
void answer_next_question(QMessageBox::StandardButton button) {
    on_next_dialog<QMessageBox>([button](QMessageBox& box) { box.button(button)->click(); });
}

}  // namespace

class TestMainWindow : public QObject {
    Q_OBJECT

    std::unique_ptr<WindowUnderTest> app_;

  private slots:
    void init() {
        app_ = std::make_unique<WindowUnderTest>();
        app_->window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&app_->window));
    }

    void cleanup() { app_.reset(); }

    void opensWithTheDefaultExperimentReady() {
        const RunSpec spec = app_->window.form().spec();
        QCOMPARE(QString::fromStdString(spec.dataset), QStringLiteral("fashion-mnist"));
        QCOMPARE(QString::fromStdString(spec.model), QStringLiteral("cnn"));
        QCOMPARE(spec.devices, 2);
        QCOMPARE(MainWindow::defaultExperiment(two_cpu_cores()).devices, 2);
    }

    // The window opens at 1500x950 on a large screen and within the free area of a smaller
    // one; its parts fit in that area on a 1024x768 projector (the charts, the table, the log
    // and the status bar all show; the form scrolls).
    void opensWithinTheScreen() {
        QCOMPARE(MainWindow::firstSize(QSize(1920, 1040)), QSize(1500, 950));
        QCOMPARE(MainWindow::firstSize(QSize(1366, 740)), QSize(1298, 703));
        QCOMPARE(MainWindow::firstSize(QSize(1500, 2000)), QSize(1425, 950));
        const QSize projector = MainWindow::firstSize(QSize(1024, 768));
        const QSize least = app_->window.minimumSizeHint();
        QVERIFY2(least.width() <= projector.width() && least.height() <= projector.height(),
                 qPrintable(QStringLiteral("%1x%2").arg(least.width()).arg(least.height())));
    }

    void ctrlRStartsARunThatFillsTheChartsAndTheTable() {
        app_->window.form().setSpec(short_synthetic_run());
        QVERIFY(app_->window.form().isValid());
        QTest::keyClick(&app_->window, Qt::Key_R, Qt::ControlModifier);
        QCOMPARE(app_->runs.ids().size(), std::size_t{1});
        const int id = app_->runs.ids().front();
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(app_->runs), 60000);
        QVERIFY2(app_->runs.find(id)->state == RunState::Finished,
                 qPrintable(app_->runs.find(id)->message));

        // The charts redraw on their own timer: wait for it, do not force it.
        const QString name = app_->runs.find(id)->name;
        ChartSurface& loss = app_->window.charts().chart(ChartKind::TrainLoss);
        QTRY_COMPARE_WITH_TIMEOUT(
            loss.seriesPoints(ChartGrid::seriesKey(id, SeriesPart::Curve)).size(), 8, 5000);
        QCOMPARE(run_legend(loss, id), name);
        QTRY_VERIFY_WITH_TIMEOUT(
            !run_legend(app_->window.charts().chart(ChartKind::ValAccuracy), id).isEmpty(), 5000);

        RunTableModel& table = app_->window.tableModel();
        QCOMPARE(table.rowCount(), 1);
        QTRY_VERIFY_WITH_TIMEOUT(table.index(0, RunTableModel::StatusColumn)
                                     .data()
                                     .toString()
                                     .startsWith(QStringLiteral("finished")),
                                 5000);
        QTRY_VERIFY_WITH_TIMEOUT(!app_->window.log().text().isEmpty(), 5000);
    }

    void twoRunsAreDrawnInTwoColours() {
        app_->window.form().setSpec(short_synthetic_run());
        auto* start = app_->window.form().findChild<QPushButton*>(QStringLiteral("start"));
        QVERIFY(start != nullptr);
        QTest::mouseClick(start, Qt::LeftButton);
        RunSpec second = short_synthetic_run();
        second.lr = 0.1;
        app_->window.form().setSpec(second);
        QTest::mouseClick(start, Qt::LeftButton);
        QCOMPARE(app_->runs.ids().size(), std::size_t{2});
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(app_->runs), 60000);

        ChartSurface& loss = app_->window.charts().chart(ChartKind::TrainLoss);
        const int first_id = app_->runs.ids()[0];
        const int second_id = app_->runs.ids()[1];
        QTRY_VERIFY_WITH_TIMEOUT(
            !run_legend(loss, first_id).isEmpty() && !run_legend(loss, second_id).isEmpty(), 5000);
        const auto curve_colour = [&loss](int id) {
            return loss.seriesStyle(ChartGrid::seriesKey(id, SeriesPart::Curve))->colour;
        };
        QVERIFY(curve_colour(first_id) != curve_colour(second_id));
    }

    void aQueuedSweepOfThreeRunsRunsInOrder() {
        app_->window.form().setSpec(short_synthetic_run());
        auto* lrs =
            qobject_cast<QLineEdit*>(app_->window.form().field(QStringLiteral("sweep_lrs")));
        QVERIFY(lrs != nullptr);
        QTest::keyClicks(lrs, QStringLiteral("0.01, 0.02, 0.04"));
        std::vector<int> started;
        connect(&app_->runs, &RunCollection::runChanged, this, [&](int id) {
            if (app_->runs.find(id)->state == RunState::Running &&
                std::find(started.begin(), started.end(), id) == started.end())
                started.push_back(id);
        });
        auto* sweep = app_->window.form().findChild<QPushButton*>(QStringLiteral("queue_sweep"));
        QVERIFY(sweep != nullptr && sweep->isEnabled());
        QTest::mouseClick(sweep, Qt::LeftButton);
        QCOMPARE(app_->runs.ids().size(), std::size_t{3});
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(app_->runs), 120000);
        QCOMPARE(started, app_->runs.ids());
        const double lrs_expected[] = {0.01, 0.02, 0.04};
        for (std::size_t i = 0; i < 3; ++i) {
            const RunRecord& run = *app_->runs.find(app_->runs.ids()[i]);
            QCOMPARE(run.spec.lr, lrs_expected[i]);
            QVERIFY(run.state == RunState::Finished);
        }
    }

    void invalidFormKeepsStartDisabled() {
        RunSpec spec = short_synthetic_run();
        spec.batch = 0;
        app_->window.form().setSpec(spec);
        QVERIFY(!app_->window.form().isValid());
        QVERIFY(!app_->window.form().fieldProblem(QStringLiteral("batch")).isEmpty());
        QTest::keyClick(&app_->window, Qt::Key_R, Qt::ControlModifier);
        QVERIFY(app_->runs.ids().empty());
    }

    void exportsChartsAndDataOfTheShownRuns() {
        app_->window.form().setSpec(short_synthetic_run());
        app_->window.startRun();
        app_->window.startRun();
        QTRY_VERIFY_WITH_TIMEOUT(all_ended(app_->runs), 60000);
        app_->runs.setVisible(app_->runs.ids()[1], false);
        QTemporaryDir folder;

        ExportRequest png;
        png.content = ExportRequest::Content::AllCharts;
        png.scale = 2;
        png.path = folder.filePath(QStringLiteral("grid.png"));
        QString error;
        QVERIFY2(app_->window.exportTo(png, &error), qPrintable(error));
        QImage image(png.path);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), QSize(4000, 2400));

        ExportRequest svg = png;
        svg.content = ExportRequest::Content::OneChart;
        svg.chart = int(ChartKind::TrainLoss);
        svg.format = ExportRequest::ImageFormat::Svg;
        svg.path = folder.filePath(QStringLiteral("loss.svg"));
        QVERIFY2(app_->window.exportTo(svg, &error), qPrintable(error));
        QFile svg_file(svg.path);
        QVERIFY(svg_file.open(QIODevice::ReadOnly));
        const QByteArray svg_text = svg_file.readAll();
        QVERIFY(svg_text.contains(app_->runs.find(app_->runs.ids()[0])->name.toUtf8()));
        QVERIFY(!svg_text.contains(app_->runs.find(app_->runs.ids()[1])->name.toUtf8()));  // hidden

        ExportRequest csv;
        csv.content = ExportRequest::Content::MetricsCsv;
        csv.path = folder.filePath(QStringLiteral("metrics.csv"));
        QVERIFY2(app_->window.exportTo(csv, &error), qPrintable(error));
        QFile csv_file(csv.path);
        QVERIFY(csv_file.open(QIODevice::ReadOnly | QIODevice::Text));
        const QList<QByteArray> rows = csv_file.readAll().trimmed().split('\n');
        std::size_t points = 0;
        for (const auto& curve : app_->runs.find(app_->runs.ids()[0])->curves)
            points += curve.size();
        QCOMPARE(std::size_t(rows.size()), points + 1);  // the header, then the shown run only

        ExportRequest unwritable = csv;
        unwritable.path = QStringLiteral("/proc/no-such-folder/metrics.csv");
        QVERIFY(!app_->window.exportTo(unwritable, &error));
        QVERIFY2(error.contains(unwritable.path), qPrintable(error));
    }

    void presenterModeShowsOnlyTheChartsAndComesBack() {
        app_->window.setPresenterMode(true);
        QVERIFY(app_->window.presenterMode());
        QVERIFY(!app_->window.form().isVisible());
        QVERIFY(!app_->window.table().isVisible());
        QVERIFY(app_->window.charts().isVisible());
        QVERIFY(app_->window.font().pointSizeF() > QApplication::font().pointSizeF());
        QTest::keyClick(&app_->window, Qt::Key_F11);
        QVERIFY(!app_->window.presenterMode());
        QVERIFY(app_->window.form().isVisible());
        QVERIFY(app_->window.table().isVisible());

        app_->window.setTheme(Theme::Dark);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() < 100);
        app_->window.setTheme(Theme::Light);
        QVERIFY(QApplication::palette().color(QPalette::Window).lightness() > 150);
    }

    void closingWithAnActiveRunAsksThenStopsIt() {
        app_->window.form().setSpec(endless_synthetic_run());
        app_->window.startRun();
        const int id = app_->runs.ids().front();
        QTRY_VERIFY_WITH_TIMEOUT(app_->runs.find(id)->step >= 1, 60000);

        answer_next_question(QMessageBox::No);
        QVERIFY(!app_->window.close());
        QVERIFY(app_->runs.find(id)->state == RunState::Running);

        answer_next_question(QMessageBox::Yes);
        QVERIFY(app_->window.close());
        QTRY_VERIFY_WITH_TIMEOUT(!is_active(app_->runs.find(id)->state), 10000);
        QVERIFY(app_->runs.find(id)->state == RunState::Cancelled);
    }

    void escapeStopsTheSelectedRun() {
        app_->window.form().setSpec(endless_synthetic_run());
        app_->window.startRun();
        const int id = app_->runs.ids().front();
        QTRY_VERIFY_WITH_TIMEOUT(app_->runs.find(id)->step >= 1, 60000);
        app_->window.table().selectRun(id);
        QTest::keyClick(&app_->window, Qt::Key_Escape);
        QTRY_VERIFY_WITH_TIMEOUT(app_->runs.find(id)->state == RunState::Cancelled, 10000);
    }

    // Start with problems in the form says which, in the status bar (docs/errors.md,
    // E-FORM-START).
    void startWithMarkedFieldsSaysWhatToFix() {
        RunSpec spec = short_synthetic_run();
        spec.batch = 0;
        app_->window.form().setSpec(spec);
        app_->window.startRun();
        const QString shown = app_->window.statusBar()->currentMessage();
        QVERIFY2(shown.startsWith(QStringLiteral("Fix the marked fields first: ")) &&
                     shown.contains(QStringLiteral("batch size must be at least 1")),
                 qPrintable(shown));
        QVERIFY(app_->runs.ids().empty());
    }
};

QTEST_MAIN(TestMainWindow)
#include "test_main_window.moc"
