#include <QAbstractButton>
#include <QApplication>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>

#include <functional>
#include <memory>
#include <vector>

#include "../app/run_fixtures.h"
#include "main_window.h"
#include "run_collection.h"
#include "run_filter_bar.h"
#include "run_store.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "store_error_dialog.h"
#include "window_test_support.h"

using namespace scalelab;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;
using scalelab::testing::on_next_dialog;
using scalelab::testing::two_cpu_cores;
using scalelab::testing::WindowUnderTest;

namespace {

QByteArray file_bytes(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

// A store holding three finished runs: "baseline" (1 device, SGD), "lars wide" (4 devices,
// LARS, tagged "week 2") and "two devices" (2 devices, SGD).
void fill_store(const QString& path) {
    RunController controller;
    RunCollection runs(controller);
    QVERIFY(runs.setStore(RunStore::open(path)));
    runs.add(fixture_run(fixture_spec(1), "baseline", 1000, {0.80, 0.86}));
    RunSpec lars = fixture_spec(4, 0.4);
    lars.optimizer = OptimizerKind::Lars;
    RunRecord wide = fixture_run(lars, "lars wide", 3600, {0.78, 0.88});
    wide.tags = QStringList{"week 2"};
    runs.add(wide);
    runs.add(fixture_run(fixture_spec(2, 0.2), "two devices", 1900, {0.79, 0.87}));
}

}  // namespace

class TestStoreWindow : public QObject {
    Q_OBJECT

    QTemporaryDir folder_;
    std::unique_ptr<WindowUnderTest> app_;

    QString storeStatus() const {
        return app_->window.findChild<QLabel*>(QStringLiteral("storeStatus"))->text();
    }

  private slots:
    void init() {
        app_ = std::make_unique<WindowUnderTest>();
        app_->window.show();
        QVERIFY(QTest::qWaitForWindowExposed(&app_->window));
    }

    void cleanup() { app_.reset(); }

    void aCorruptStoreIsExplainedAndLeftAlone() {
        const QString path = folder_.filePath(QStringLiteral("corrupt.sqlite"));
        QByteArray garbage;
        for (int i = 0; i < 400; ++i)
            garbage += "this is not a run store; ";
        {
            QFile file(path);
            QVERIFY(file.open(QIODevice::WriteOnly));
            file.write(garbage);
        }
        QString text;
        QStringList choices;
        on_next_dialog<StoreErrorDialog>([&](StoreErrorDialog& dialog) {
            text = dialog.text() + QLatin1Char('\n') + dialog.informativeText();
            for (QAbstractButton* button : dialog.buttons())
                choices << button->text();
            dialog.findChild<QAbstractButton*>(QStringLiteral("goOnWithoutStore"))->click();
        });
        QVERIFY(!app_->window.openStore(path));

        QVERIFY2(text.contains(QDir::toNativeSeparators(path)), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("never overwrites")), qPrintable(text));
        QCOMPARE(choices, (QStringList{"Open Another File...", "Start a New Store...",
                                       "Continue Without a Store"}));
        QCOMPARE(file_bytes(path), garbage);
        QVERIFY(app_->runs.store() == nullptr);
        QVERIFY2(storeStatus().contains(QStringLiteral("memory only")), qPrintable(storeStatus()));
    }

    void aStoreFillsTheTableAndEditsReachIt() {
        const QString path = folder_.filePath(QStringLiteral("edits.sqlite"));
        fill_store(path);
        QVERIFY(app_->window.openStore(path));
        QVERIFY2(storeStatus().contains(QStringLiteral("edits.sqlite")), qPrintable(storeStatus()));
        RunTableModel& model = app_->window.tableModel();
        QCOMPARE(model.rowCount(), 3);
        const int baseline = model.runId(model.index(0, 0));
        const int wide = model.runId(model.index(1, 0));
        QVERIFY(!app_->runs.find(baseline)->visible);  // stored runs come hidden
        QCOMPARE(model.index(1, RunTableModel::TagsColumn).data().toString(),
                 QStringLiteral("week 2"));
        QCOMPARE(model.index(0, RunTableModel::BestAccuracyColumn).data().toString(),
                 QStringLiteral("0.860"));

        const std::unique_ptr<RunStore> reader = RunStore::open(path);
        QVERIFY(model.setData(model.index(0, RunTableModel::NameColumn), QStringLiteral("sgd")));
        QCOMPARE(reader->run(baseline).name, QStringLiteral("sgd"));
        QVERIFY(model.setData(model.index(0, RunTableModel::TagsColumn),
                              QStringLiteral("reference, week 1")));
        QCOMPARE(reader->run(baseline).tags, (QStringList{"reference", "week 1"}));
        app_->window.table().selectRun(baseline);
        on_next_dialog<QInputDialog>([](QInputDialog& dialog) {
            QCOMPARE(dialog.textValue(), QStringLiteral("reference, week 1"));
            dialog.setTextValue(QStringLiteral("week 1 , ,sgd"));
            dialog.accept();
        });
        app_->window.table().findChild<QAction*>(QStringLiteral("tagsAction"))->trigger();
        QCOMPARE(reader->run(baseline).tags, (QStringList{"week 1", "sgd"}));
        // Ticking a run shows it: its curves are loaded from the store.
        QVERIFY(model.setData(model.index(1, RunTableModel::NameColumn), Qt::Checked,
                              Qt::CheckStateRole));
        QVERIFY(app_->runs.find(wide)->curves_loaded);
        QCOMPARE(app_->runs.find(wide)->curve(Metric::TrainLoss).size(), std::size_t{20});

        app_->window.table().selectRun(wide);
        on_next_dialog<QMessageBox>([](QMessageBox& box) {
            for (QAbstractButton* button : box.buttons())
                if (button->text() == QStringLiteral("Delete"))
                    button->click();
        });
        app_->window.table().findChild<QAction*>(QStringLiteral("deleteAction"))->trigger();
        QVERIFY(app_->runs.find(wide) == nullptr);
        QCOMPARE(reader->list_runs().size(), std::size_t{2});
    }

    void theFilterBarFiltersTheTable() {
        const QString path = folder_.filePath(QStringLiteral("filter.sqlite"));
        fill_store(path);
        QVERIFY(app_->window.openStore(path));
        RunFilterBar& bar = app_->window.filterBar();
        QAbstractItemModel& shown = *app_->window.table().model();
        QCOMPARE(shown.rowCount(), 3);

        QTest::keyClicks(&bar.searchBox(), QStringLiteral("week"));
        QCOMPARE(shown.rowCount(), 1);
        const int wide = shown.index(0, 0).data(RunTableModel::RunIdRole).toInt();
        QCOMPARE(app_->runs.find(wide)->name, QStringLiteral("lars wide"));
        // The view's row maps back to the run: selection and actions act on the right one.
        app_->window.table().selectRun(wide);
        QCOMPARE(app_->window.table().selectedRunId(), wide);
        QCOMPARE(app_->window.table().currentIndex().row(), 0);

        bar.searchBox().clear();
        bar.regularExpressionBox().setChecked(true);
        QTest::keyClicks(&bar.searchBox(), QStringLiteral("^(two"));
        QVERIFY2(bar.errorText().contains(QStringLiteral("regular expression")),
                 qPrintable(bar.errorText()));
        QCOMPARE(shown.rowCount(), 3);  // an invalid pattern hides nothing
        QTest::keyClicks(&bar.searchBox(), QStringLiteral(")"));
        QVERIFY(bar.errorText().isEmpty());
        QCOMPARE(shown.rowCount(), 1);

        bar.searchBox().clear();
        QComboBox& devices = bar.fieldBox(RunFilter::Field::Devices);
        QCOMPARE(devices.count(), 4);  // any, 1, 2, 4
        devices.setCurrentIndex(devices.findText(QStringLiteral("4")));
        QCOMPARE(shown.rowCount(), 1);
        QCOMPARE(shown.index(0, 0).data(RunTableModel::RunIdRole).toInt(), wide);
        QVERIFY(bar.findChild<QLabel*>(QStringLiteral("runCount"))
                    ->text()
                    .contains(QStringLiteral("1 of 3")));
    }

    void selectedRunsGoOutAndComeBack() {
        const QString path = folder_.filePath(QStringLiteral("exchange.sqlite"));
        fill_store(path);
        QVERIFY(app_->window.openStore(path));
        const std::vector<int> ids = app_->runs.ids();
        app_->window.table().selectRuns({ids[0], ids[2]});
        QCOMPARE(app_->window.table().selectedRunIds(), (std::vector<int>{ids[0], ids[2]}));

        QString error;
        const QString csv = folder_.filePath(QStringLiteral("selected.csv"));
        QVERIFY2(app_->window.exportMetricsCsv(app_->window.table().selectedRunIds(), csv, &error),
                 qPrintable(error));
        std::size_t points = 0;
        for (const int id : {ids[0], ids[2]})
            for (const auto& curve : app_->runs.find(id)->curves)  // loaded for the export
                points += curve.size();
        QVERIFY(points > 0);
        QCOMPARE(std::size_t(file_bytes(csv).trimmed().split('\n').size()), points + 1);

        const QString exchange = folder_.filePath(QStringLiteral("two.scalelab.json"));
        QVERIFY2(app_->window.exportRuns(app_->window.table().selectedRunIds(), exchange, &error),
                 qPrintable(error));
        std::vector<int> imported;
        QVERIFY2(app_->window.importRuns(exchange, &imported, &error), qPrintable(error));
        QCOMPARE(imported.size(), std::size_t{2});
        QCOMPARE(app_->runs.ids().size(), std::size_t{5});  // listed at once
        QCOMPARE(app_->runs.find(imported[1])->spec.devices, 2);

        const QString broken = folder_.filePath(QStringLiteral("broken.scalelab.json"));
        {
            QFile out(broken);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(R"({"format": "scalelab-runs", "version": 1, "runs": [{"name": 3}]})");
        }
        QVERIFY(!app_->window.importRuns(broken, &imported, &error));
        QVERIFY2(error.contains(QStringLiteral("Nothing was imported")), qPrintable(error));
        QCOMPARE(app_->runs.ids().size(), std::size_t{5});

        // A metrics file (an exported PyTorch script's) comes in as a run tagged pytorch.
        const QString metrics = folder_.filePath(QStringLiteral("pytorch.jsonl"));
        {
            QFile out(metrics);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(R"({"type":"start","devices":1,"threads_per_device":1,"cores":1,)"
                      R"("global_batch":32,"steps_per_epoch":1,"parameters":10,"warnings":[],)"
                      R"("engine":"pytorch","experiment":{"model":"mlp","batch":32}})"
                      "\n"
                      R"({"type":"step","step":1,"epoch":1,"loss":2.3,"accuracy":0.1,"lr":0.05,)"
                      R"("images_per_s":100,"seconds":0.3,"noise_scale":null,"devices":[]})"
                      "\n");
        }
        QVERIFY2(app_->window.importRuns(metrics, &imported, &error), qPrintable(error));
        QCOMPARE(imported.size(), std::size_t{1});
        QCOMPARE(app_->runs.find(imported[0])->tags, QStringList{QStringLiteral("pytorch")});
    }

    // Runs come in and go out through a run store; without one, or with a file or a run that is
    // not there, the window says what to do (docs/errors.md, E-STORE-IN-USE, E-IMPORT-APP,
    // E-EXPORT-NOTHING).
    void runsGoOutAndComeInThroughAStore() {
        const QString file = folder_.filePath(QStringLiteral("runs.scalelab.json"));
        const QString native = QDir::toNativeSeparators(file);
        std::vector<int> imported;
        QString error;
        QVERIFY(!app_->window.importRuns(file, &imported, &error));
        QCOMPARE(error, QStringLiteral("Open a run store first: imported runs are added to it."));
        QVERIFY(!app_->window.exportRuns({1}, file, &error));
        QCOMPARE(error,
                 QStringLiteral("Runs are exported from the run store: open or create one first."));

        const QString store = folder_.filePath(QStringLiteral("store.sqlite"));
        QVERIFY(app_->window.openStore(store));
        QVERIFY(!app_->window.importRuns(file, &imported, &error));
        QVERIFY2(error.startsWith(
                     QStringLiteral("Nothing was imported from %1: cannot read it: ").arg(native)),
                 qPrintable(error));
        QFile bad(file);
        QVERIFY(bad.open(QIODevice::WriteOnly));
        bad.write("[1, 2]");
        bad.close();
        QVERIFY(!app_->window.importRuns(file, &imported, &error));
        QCOMPARE(error, QStringLiteral("Nothing was imported from %1: not a ScaleLab runs file: it "
                                       "must be an object with \"format\": \"scalelab-runs\" first")
                            .arg(native));
        QVERIFY(!app_->window.exportRuns({99}, file, &error));
        QVERIFY2(error.startsWith(QStringLiteral("Cannot export the runs to %1: there is no run 99 "
                                                 "in %2")
                                      .arg(native, store)),
                 qPrintable(error));
        QVERIFY(!app_->window.exportMetricsCsv({99}, file, &error));
        QCOMPARE(error,
                 QStringLiteral("The curves of run 99 could not be read from the run store."));
        QCOMPARE(file_bytes(file), QByteArray("[1, 2]"));
    }
};

QTEST_MAIN(TestStoreWindow)
#include "test_store_window.moc"
