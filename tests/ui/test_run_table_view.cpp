#include <QAction>
#include <QApplication>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSignalSpy>
#include <QTimer>
#include <QtTest>

#include "../app/run_fixtures.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_filter.h"
#include "run_palette.h"
#include "run_table_model.h"
#include "run_table_view.h"

using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunState;
using scalelab::RunTableModel;
using scalelab::RunTableView;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

// Answers the next message box with the button whose text is `button`, once it is shown.
void answer_next_message_box(const QString& button, QString* text) {
    QTimer::singleShot(10, [button, text] {
        auto* box = qobject_cast<QMessageBox*>(QApplication::activeModalWidget());
        if (box == nullptr) {
            answer_next_message_box(button, text);
            return;
        }
        *text = box->text();
        for (QAbstractButton* candidate : box->buttons())
            if (candidate->text() == button)
                candidate->click();
    });
}

}  // namespace

class TestRunTableView : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        runs_ = std::make_unique<RunCollection>(controller_);
        finished_ = runs_->add(fixture_run(fixture_spec(1), "finished", 1000, {0.8}));
        RunRecord running = fixture_run(fixture_spec(2), "running", 1800, {0.8});
        running.state = RunState::Running;
        running_ = runs_->add(running);
        model_ = std::make_unique<RunTableModel>(*runs_);
        view_ = std::make_unique<RunTableView>(*runs_, *model_);
        view_->resize(1200, 200);
        view_->show();
    }

    void cleanup() {
        view_.reset();
        model_.reset();
        runs_.reset();
    }

    void theKeyColumnsComeFirstAndTheRestCanBeChosen() {
        // The configuration is in every cell's tooltip, not a column, until the user shows it.
        QVERIFY(view_->isColumnHidden(RunTableModel::ConfigurationColumn));
        const QModelIndex name = view_->model()->index(0, RunTableModel::NameColumn);
        QVERIFY(name.data(Qt::ToolTipRole).toString().contains(QStringLiteral("cnn")));
        const QByteArray before = view_->saveColumns();
        view_->setColumnHidden(RunTableModel::ConfigurationColumn, false);
        view_->setColumnHidden(RunTableModel::NotesColumn, true);
        const QByteArray chosen = view_->saveColumns();
        QVERIFY(view_->restoreColumns(before));
        QVERIFY(view_->isColumnHidden(RunTableModel::ConfigurationColumn));
        QVERIFY(!view_->isColumnHidden(RunTableModel::NotesColumn));
        QVERIFY(view_->restoreColumns(chosen));
        QVERIFY(!view_->isColumnHidden(RunTableModel::ConfigurationColumn));
        QVERIFY(view_->isColumnHidden(RunTableModel::NotesColumn));
    }

    void aRunThatStartsIsScrolledIntoView() {
        for (int i = 0; i < 30; ++i)
            runs_->add(fixture_run(fixture_spec(1), QStringLiteral("queued %1").arg(i), 10, {}));
        RunRecord last = fixture_run(fixture_spec(2), "last", 10, {});
        last.state = RunState::Running;
        const int id = runs_->add(last);
        QTest::qWait(20);
        const auto row_in_view = [this](const QString& name) {
            const QModelIndexList found = view_->model()->match(
                view_->model()->index(0, RunTableModel::NameColumn), Qt::EditRole, name);
            return !found.isEmpty() &&
                   view_->viewport()->rect().contains(view_->visualRect(found.front()).center());
        };
        QVERIFY(!row_in_view(QStringLiteral("last")));
        runs_->setVisible(id, false);  // any change of a running run
        QTest::qWait(20);
        QVERIFY(row_in_view(QStringLiteral("last")));
    }

    void names_carry_the_run_colour() {
        const QModelIndex name = view_->model()->index(1, RunTableModel::NameColumn);
        QCOMPARE(name.data(Qt::DecorationRole).value<QColor>(),
                 scalelab::run_colour(runs_->find(running_)->colour));
        QVERIFY(!view_->model()
                     ->index(1, RunTableModel::StatusColumn)
                     .data(Qt::DecorationRole)
                     .isValid());
    }

    void actions_follow_the_selected_run() {
        QCOMPARE(view_->selectedRunId(), 0);
        auto* stop = view_->findChild<QAction*>(QStringLiteral("stopAction"));
        QVERIFY(stop != nullptr);
        QVERIFY(!stop->isEnabled());

        view_->selectRun(finished_);
        QCOMPARE(view_->selectedRunId(), finished_);
        QVERIFY(!stop->isEnabled());  // nothing to stop

        view_->selectRun(running_);
        QCOMPARE(view_->selectedRunId(), running_);
        QVERIFY(stop->isEnabled());
        QSignalSpy stops(view_.get(), &RunTableView::stopRequested);
        stop->trigger();
        QCOMPARE(stops.count(), 1);
        QCOMPARE(stops.front().at(0).toInt(), running_);

        QSignalSpy new_experiments(view_.get(), &RunTableView::newExperimentFromRun);
        view_->findChild<QAction*>(QStringLiteral("newExperimentAction"))->trigger();
        QCOMPARE(new_experiments.front().at(0).toInt(), running_);
    }

    void baseline_and_visibility_toggle() {
        view_->selectRun(finished_);
        auto* baseline = view_->findChild<QAction*>(QStringLiteral("baselineAction"));
        baseline->trigger();
        QCOMPARE(runs_->baseline(), finished_);
        QCOMPARE(baseline->text().remove(QLatin1Char('&')), QStringLiteral("Clear baseline"));
        baseline->trigger();
        QCOMPARE(runs_->baseline(), 0);

        auto* visibility = view_->findChild<QAction*>(QStringLiteral("visibilityAction"));
        visibility->trigger();
        QVERIFY(!runs_->find(finished_)->visible);
        QCOMPARE(visibility->text().remove(QLatin1Char('&')), QStringLiteral("Show on charts"));
        visibility->trigger();
        QVERIFY(runs_->find(finished_)->visible);
    }

    void rename_edits_the_name_in_place() {
        view_->selectRun(running_);
        view_->findChild<QAction*>(QStringLiteral("renameAction"))->trigger();
        const auto* editor = view_->findChild<QLineEdit*>();
        QVERIFY(editor != nullptr);
        QVERIFY(editor->isVisible());
        QCOMPARE(editor->text(), QStringLiteral("running"));
        QCOMPARE(view_->currentIndex().column(), int(RunTableModel::NameColumn));
        QCOMPARE(view_->currentIndex().row(), 1);
    }

    void delete_asks_first() {
        view_->selectRun(running_);
        QString question;
        answer_next_message_box(QStringLiteral("Cancel"), &question);
        view_->findChild<QAction*>(QStringLiteral("deleteAction"))->trigger();
        QVERIFY2(question.contains(QStringLiteral("still running")), qPrintable(question));
        QVERIFY(runs_->find(running_) != nullptr);

        view_->selectRun(finished_);
        answer_next_message_box(QStringLiteral("Delete"), &question);
        view_->activateWindow();
        QVERIFY(QTest::qWaitForWindowActive(view_.get()));
        view_->setFocus();
        QTest::keyClick(view_.get(), Qt::Key_Delete);
        QVERIFY2(question.contains(QStringLiteral("finished")), qPrintable(question));
        QVERIFY(runs_->find(finished_) == nullptr);
        QCOMPARE(view_->model()->rowCount(), 1);
    }

    // Repeats: a group's row opens onto its runs and stands for all of them.
    void a_group_is_one_closed_row_that_acts_for_all_its_runs() {
        std::vector<int> members;
        for (std::uint64_t seed = 1; seed <= 3; ++seed) {
            RunRecord run = fixture_run(fixture_spec(4), QStringLiteral("wide (seed %1)").arg(seed),
                                        3000, {0.8 + 0.01 * double(seed)});
            run.group = QStringLiteral("g");
            run.spec.seed = seed;
            members.push_back(runs_->add(run));
        }
        QCOMPARE(view_->model()->rowCount(), 3);
        const QModelIndex group = view_->model()->index(2, RunTableModel::NameColumn);
        QVERIFY(!view_->isExpanded(group));
        QVERIFY(view_->visualRect(view_->model()->index(0, 0, group)).isEmpty());

        view_->setCurrentIndex(group);
        QCOMPARE(view_->selectedRunIds(), members);
        view_->findChild<QAction*>(QStringLiteral("visibilityAction"))->trigger();
        for (const int id : members)
            QVERIFY(!runs_->find(id)->visible);
        QVERIFY(!view_->findChild<QAction*>(QStringLiteral("renameAction"))->isEnabled());

        // Selecting one of its runs opens the group.
        view_->selectRun(members[1]);
        QVERIFY(view_->isExpanded(group));
        QCOMPARE(view_->selectedRunIds(), std::vector<int>{members[1]});
        QCOMPARE(view_->selectedRunId(), members[1]);

        // The filter keeps a group's row while one of its runs matches.
        view_->filter().setText(QStringLiteral("(seed 2)"));
        QCOMPARE(view_->model()->rowCount(), 1);
        const QModelIndex filtered = view_->model()->index(0, 0);
        QCOMPARE(view_->model()->rowCount(filtered), 1);
        QCOMPARE(view_->model()->index(0, 0, filtered).data(RunTableModel::RunIdRole).toInt(),
                 members[1]);
    }

  private:
    RunController controller_;
    std::unique_ptr<RunCollection> runs_;
    std::unique_ptr<RunTableModel> model_;
    std::unique_ptr<RunTableView> view_;
    int finished_ = 0;
    int running_ = 0;
};

QTEST_MAIN(TestRunTableView)
#include "test_run_table_view.moc"
