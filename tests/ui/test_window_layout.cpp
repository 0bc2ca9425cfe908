// The window's layout on a classroom projector (1024x768) and on a workstation (1600x1000):
// every field of the form reachable without sideways scrolling, charts at least 200 px tall,
// the table's key columns in view, the lesson's results readable, in presenter mode too.

#include <QDockWidget>
#include <QHeaderView>
#include <QScrollArea>
#include <QScrollBar>
#include <QTreeWidget>
#include <QtTest>

#include "chart_grid.h"
#include "experiment_form.h"
#include "lesson_library.h"
#include "lesson_panel.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::WindowUnderTest;

namespace {

constexpr int min_chart_height = 200;

// A window as it opens on a screen of `available` free pixels.
void open_on(MainWindow& window, QSize available) {
    window.resize(MainWindow::firstSize(available));
    window.adaptTo(available);
    window.show();
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QTest::qWait(50);
}

// Fields whose editor lies (even in part) beyond the right edge of the form's viewport.
QStringList fields_cut_off(ExperimentForm& form) {
    auto* scroll = form.findChild<QScrollArea*>();
    QStringList cut;
    for (QWidget* editor : scroll->widget()->findChildren<QWidget*>()) {
        if (editor->objectName().isEmpty() || !editor->isVisibleTo(&form) ||
            form.field(editor->objectName()) != editor)
            continue;
        const QPoint right = editor->mapTo(scroll->viewport(), QPoint(editor->width(), 0));
        if (right.x() > scroll->viewport()->width())
            cut << QStringLiteral("%1 (right edge %2 > %3)")
                       .arg(editor->objectName())
                       .arg(right.x())
                       .arg(scroll->viewport()->width());
    }
    return cut;
}

void check_charts_tall_enough(MainWindow& window) {
    for (const ChartKind kind : window.charts().shownCharts()) {
        QWidget* chart = window.charts().chart(kind).widget();
        QVERIFY2(chart->height() >= min_chart_height, qPrintable(QStringLiteral("%1 is %2 px tall")
                                                                     .arg(ChartGrid::title(kind))
                                                                     .arg(chart->height())));
    }
}

void check_key_columns_in_view(RunTableView& table) {
    for (const int column :
         {int(RunTableModel::NameColumn), int(RunTableModel::StatusColumn),
          int(RunTableModel::BestAccuracyColumn), int(RunTableModel::ImagesPerSecondColumn),
          int(RunTableModel::EfficiencyColumn)}) {
        QVERIFY2(!table.isColumnHidden(column), qPrintable(QString::number(column)));
        const int right = table.columnViewportPosition(column) + table.columnWidth(column);
        QVERIFY2(right <= table.viewport()->width(),
                 qPrintable(QStringLiteral("column %1 ends at %2 of %3")
                                .arg(column)
                                .arg(right)
                                .arg(table.viewport()->width())));
    }
}

}  // namespace

class TestWindowLayout : public QObject {
    Q_OBJECT

  private slots:
    void everyPartFitsTheScreen_data() {
        QTest::addColumn<QSize>("available");
        QTest::newRow("projector 1024x768") << QSize(1024, 768 - 30);
        QTest::newRow("workstation 1600x1000") << QSize(1600, 1000 - 30);
    }

    void everyPartFitsTheScreen() {
        QFETCH(QSize, available);
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        open_on(window, available);
        QVERIFY2(
            window.width() <= available.width() && window.height() <= available.height(),
            qPrintable(
                QStringLiteral("the window is %1x%2").arg(window.width()).arg(window.height())));
        const QStringList cut = fields_cut_off(window.form());
        QVERIFY2(cut.isEmpty(), qPrintable(cut.join(QStringLiteral(", "))));
        QCOMPARE(window.form().findChild<QScrollArea*>()->horizontalScrollBar()->maximum(), 0);
        check_charts_tall_enough(window);
        check_key_columns_in_view(window.table());
    }

    void aLessonLeavesTheChartsAndFormWhole_data() { everyPartFitsTheScreen_data(); }

    void aLessonLeavesTheChartsAndFormWhole() {
        QFETCH(QSize, available);
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        open_on(window, available);
        const LessonEntry entry =
            load_lesson_file(shipped_lessons_folder() + QStringLiteral("/05-warm-up.json"),
                             scalelab::testing::two_cpu_cores(), LessonSize::Test);
        QVERIFY2(entry.lesson, qPrintable(entry.error));
        window.openLesson(*entry.lesson);
        QTest::qWait(50);
        QVERIFY(window.lessonPanel().isVisible());
        QVERIFY2(window.lessonPanel().width() >= 300,
                 qPrintable(QString::number(window.lessonPanel().width())));
        // The results column of the lesson's runs starts inside the panel.
        auto* runs = window.lessonPanel().findChild<QTreeWidget*>();
        QVERIFY(runs);
        QVERIFY(runs->header()->sectionViewportPosition(2) < runs->viewport()->width() - 60);
        // The experiment stays one click away and whole.
        window.showExperiment();
        QTest::qWait(50);
        QVERIFY(window.form().isVisible());
        QVERIFY(fields_cut_off(window.form()).isEmpty());
        check_charts_tall_enough(window);
    }

    void presenterModeKeepsChartsTall() {
        WindowUnderTest under_test;
        MainWindow& window = under_test.window;
        open_on(window, QSize(1024, 738));
        window.setPresenterMode(true);
        window.resize(1024, 768);  // the offscreen platform has no full screen of its own
        QTest::qWait(50);
        check_charts_tall_enough(window);
        window.setPresenterMode(false);
        QTest::qWait(50);
        QVERIFY(fields_cut_off(window.form()).isEmpty());
    }
};

QTEST_MAIN(TestWindowLayout)
#include "test_window_layout.moc"
