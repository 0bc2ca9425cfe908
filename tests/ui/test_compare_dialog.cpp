#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QtTest>

#include "../app/run_fixtures.h"
#include "compare_dialog.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_filter.h"
#include "run_filter_bar.h"
#include "run_table_model.h"
#include "run_table_view.h"
#include "window_test_support.h"

using scalelab::CompareDialog;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunFilterBar;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::RunTableModel;
using scalelab::RunTableView;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;
using scalelab::testing::on_next_dialog;

// "What differs" in the filter bar and Compare in the run table's context menu.
class TestCompareDialog : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        runs_ = std::make_unique<RunCollection>(controller_);
        RunSpec wide = fixture_spec(1);
        wide.batch = 256;
        plain_ = runs_->add(fixture_run(fixture_spec(1), "plain", 1000, {0.80}));
        fast_ = runs_->add(fixture_run(fixture_spec(1, 0.4), "fast", 1000, {0.84}));
        wide_ = runs_->add(fixture_run(wide, "wide", 2000, {0.82}));
        // Repeats of "fast" from its seed on.
        for (const std::uint64_t offset : {0, 1}) {
            RunRecord member = fixture_run(fixture_spec(1, 0.4), "repeat", 1000, {0.86});
            member.spec.seed += offset;
            member.group = QStringLiteral("repeats");
            runs_->add(member);
        }
        model_ = std::make_unique<RunTableModel>(*runs_);
        view_ = std::make_unique<RunTableView>(*runs_, *model_);
        bar_ = std::make_unique<RunFilterBar>(view_->filter());
        view_->resize(1200, 300);
        view_->show();
    }

    void cleanup() {
        bar_.reset();
        view_.reset();
        model_.reset();
        runs_.reset();
    }

    void compareNeedsTwoRunsOrGroups() {
        QAction* compare = action("compareAction");
        view_->selectRuns({});
        QVERIFY(!compare->isEnabled());
        view_->selectRuns({fast_});
        QVERIFY(!compare->isEnabled());
        view_->selectRuns({fast_, wide_});
        QVERIFY(compare->isEnabled());
        selectGroupRowAnd({plain_});
        QVERIFY(compare->isEnabled());
    }

    void compareShowsOneColumnPerRunOrGroup() {
        selectGroupRowAnd({plain_, fast_});
        QStringList columns;
        QStringList fields;
        QString best;
        QString copied;
        on_next_dialog<CompareDialog>([&](CompareDialog& dialog) {
            const QAbstractItemModel& table = *dialog.table().model();
            for (int column = 0; column < table.columnCount(); ++column)
                columns << table.headerData(column, Qt::Horizontal).toString();
            fields = dialog.model().fields();
            const int row =
                dialog.model().figureRow(scalelab::CompareTableModel::Figure::BestAccuracy);
            best = table.index(row, 2).data().toString();
            dialog.copyButton().click();
            copied = QApplication::clipboard()->text();
            dialog.reject();
        });
        action("compareAction")->trigger();
        QCOMPARE(columns.size(), 3);
        QCOMPARE(columns.front(), QStringLiteral("plain"));
        QVERIFY2(columns.back().endsWith(QStringLiteral("(group of 2)")),
                 qPrintable(columns.back()));
        // The group counts with its first seed, which is the others' too.
        QCOMPARE(fields, QStringList({QStringLiteral("lr")}));
        QCOMPARE(best, QStringLiteral("0.860 ± 0.000"));
        QVERIFY(copied.startsWith(QStringLiteral(",plain,fast,")));
    }

    // A run selected together with its own group's row is in the group's column only.
    void aGroupsOwnRunIsNotComparedTwice() {
        QAbstractItemModel& shown = *view_->model();
        QItemSelection selection;
        for (int row = 0; row < shown.rowCount(); ++row) {
            const QModelIndex index = shown.index(row, 0);
            if (index.data(RunTableModel::GroupRole).toString().isEmpty()) {
                if (index.data(RunTableModel::RunIdRole).toInt() == plain_)
                    selection.select(index, index);
                continue;
            }
            view_->expand(index);
            const QModelIndex member = shown.index(0, 0, index);
            QVERIFY(member.isValid());
            selection.select(index, index);
            selection.select(member, member);
        }
        view_->selectionModel()->select(
            selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(view_->selectionModel()->selectedRows().size(), 3);
        int columns = 0;
        on_next_dialog<CompareDialog>([&](CompareDialog& dialog) {
            columns = dialog.table().model()->columnCount();
            dialog.reject();
        });
        action("compareAction")->trigger();
        QCOMPARE(columns, 2);  // plain, and the group
    }

    void whatDiffersFollowsTheRowsTheFilterLists() {
        const auto configuration = [this](int id) {
            return model_->indexOfRun(id, RunTableModel::ConfigurationColumn).data().toString();
        };
        const QString whole = configuration(fast_);
        bar_->differencesBox().setChecked(true);
        QCOMPARE(configuration(fast_), QStringLiteral("batch 128 · lr 0.4"));
        QCOMPARE(configuration(wide_), QStringLiteral("batch 256 · lr 0.1"));

        bar_->regularExpressionBox().setChecked(true);
        bar_->searchBox().setText(QStringLiteral("^(plain|fast)$"));
        QCOMPARE(view_->filter().rowCount(), 2);
        QCOMPARE(configuration(fast_), QStringLiteral("lr 0.4"));

        bar_->differencesBox().setChecked(false);
        QCOMPARE(configuration(fast_), whole);
    }

  private:
    QAction* action(const char* name) {
        QAction* found = view_->findChild<QAction*>(QString::fromLatin1(name));
        Q_ASSERT(found != nullptr);
        return found;
    }

    // Selects the group's row and the rows of `runs`.
    void selectGroupRowAnd(const std::vector<int>& runs) {
        QAbstractItemModel& shown = *view_->model();
        QItemSelection selection;
        for (int row = 0; row < shown.rowCount(); ++row) {
            const QModelIndex index = shown.index(row, 0);
            if (!index.data(RunTableModel::GroupRole).toString().isEmpty() ||
                std::count(runs.begin(), runs.end(), index.data(RunTableModel::RunIdRole).toInt()))
                selection.select(index, index);
        }
        view_->selectionModel()->select(
            selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }

    RunController controller_;
    std::unique_ptr<RunCollection> runs_;
    std::unique_ptr<RunTableModel> model_;
    std::unique_ptr<RunTableView> view_;
    std::unique_ptr<RunFilterBar> bar_;
    int plain_ = 0;
    int fast_ = 0;
    int wide_ = 0;
};

QTEST_MAIN(TestCompareDialog)
#include "test_compare_dialog.moc"
