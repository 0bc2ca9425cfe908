#include <QSignalSpy>
#include <QtTest>

#include <memory>
#include <vector>

#include "run_collection.h"
#include "run_filter.h"
#include "run_fixtures.h"
#include "run_table_model.h"

using namespace scalelab;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;
using Field = RunFilter::Field;

class TestRunFilter : public QObject {
    Q_OBJECT

    RunController controller_;
    std::unique_ptr<RunCollection> runs_;
    std::unique_ptr<RunTableModel> model_;
    std::unique_ptr<RunFilter> filter_;
    int sgd_ = 0;
    int lars_ = 0;
    int sqrt_ = 0;

    // The names of the runs the filter lets through, in table order.
    QStringList shown() const {
        QStringList names;
        for (int row = 0; row < filter_->rowCount(); ++row)
            names << filter_->index(row, RunTableModel::NameColumn).data(Qt::EditRole).toString();
        return names;
    }

  private slots:
    void init() {
        runs_ = std::make_unique<RunCollection>(controller_);
        RunRecord sgd = fixture_run(fixture_spec(1), "baseline", 1000, {0.8});
        sgd.tags = QStringList{"week 1"};
        sgd_ = runs_->add(sgd);

        RunSpec lars = fixture_spec(12);
        lars.optimizer = OptimizerKind::Lars;
        lars.lr_scaling = LrScaling::Linear;
        RunRecord wide = fixture_run(lars, "wide", 9000, {0.7});
        wide.tags = QStringList{"week 2", "large batch"};
        lars_ = runs_->add(wide);

        RunSpec sqrt = fixture_spec(2);
        sqrt.lr_scaling = LrScaling::Sqrt;
        sqrt_ = runs_->add(fixture_run(sqrt, "two devices", 1800, {0.8}));

        model_ = std::make_unique<RunTableModel>(*runs_);
        filter_ = std::make_unique<RunFilter>(*model_);
    }

    void cleanup() {
        filter_.reset();
        model_.reset();
        runs_.reset();
    }

    void noFilterShowsEveryRunInOrder() {
        QVERIFY(!filter_->isActive());
        QCOMPARE(shown(), (QStringList{"baseline", "wide", "two devices"}));
    }

    void everyWordMatchesNameTagsOrConfiguration() {
        filter_->setText(QStringLiteral("WEEK"));  // tags, any case
        QCOMPARE(shown(), (QStringList{"baseline", "wide"}));
        filter_->setText(QStringLiteral("week lars"));  // a tag and the configuration
        QCOMPARE(shown(), (QStringList{"wide"}));
        filter_->setText(QStringLiteral("sqrt"));  // the LR rule in the configuration
        QCOMPARE(shown(), (QStringList{"two devices"}));
        filter_->setText(QStringLiteral("devices week"));  // no run has both
        QVERIFY(shown().isEmpty());
        QVERIFY(filter_->isActive());
        QVERIFY(filter_->error().isEmpty());
        filter_->setText(QString());
        QCOMPARE(shown().size(), 3);
    }

    void aRegularExpressionMatchesAnyOfTheTexts() {
        filter_->setRegularExpression(true);
        filter_->setText(QStringLiteral("^(two|wide)"));
        QCOMPARE(shown(), (QStringList{"wide", "two devices"}));
        filter_->setText(QStringLiteral("week [0-9]$"));
        QCOMPARE(shown(), (QStringList{"baseline"}));  // "week 2, large batch" does not end so
    }

    void anInvalidPatternIsExplainedAndHidesNothing() {
        QSignalSpy errors(filter_.get(), &RunFilter::errorChanged);
        filter_->setRegularExpression(true);
        filter_->setText(QStringLiteral("wide("));
        QVERIFY2(filter_->error().contains(QStringLiteral("regular expression")),
                 qPrintable(filter_->error()));
        QVERIFY2(filter_->error().contains(QStringLiteral("character 6")),
                 qPrintable(filter_->error()));
        QCOMPARE(errors.count(), 1);
        QCOMPARE(shown().size(), 3);

        // As plain text the same characters are fine.
        filter_->setRegularExpression(false);
        QVERIFY(filter_->error().isEmpty());
        QCOMPARE(errors.count(), 2);
        QVERIFY(shown().isEmpty());
    }

    void configurationFieldsMatchExactly() {
        QCOMPARE(RunFilter::fieldValue(runs_->find(lars_)->spec, Field::GlobalBatch),
                 QStringLiteral("1536"));
        QCOMPARE(filter_->valuesPresent(Field::Devices), (QStringList{"1", "2", "12"}));
        QCOMPARE(filter_->valuesPresent(Field::Optimizer), (QStringList{"lars", "sgd"}));
        QCOMPARE(filter_->valuesPresent(Field::LrRule), (QStringList{"linear", "none", "sqrt"}));

        filter_->setField(Field::Devices, QStringLiteral("1"));  // not 12
        QCOMPARE(shown(), (QStringList{"baseline"}));
        filter_->setField(Field::Devices, QString());
        filter_->setField(Field::Optimizer, QStringLiteral("sgd"));
        QCOMPARE(shown(), (QStringList{"baseline", "two devices"}));
        filter_->setField(Field::GlobalBatch, QStringLiteral("256"));
        QCOMPARE(shown(), (QStringList{"two devices"}));
        filter_->setText(QStringLiteral("baseline"));  // fields and text together
        QVERIFY(shown().isEmpty());
        QCOMPARE(filter_->field(Field::GlobalBatch), QStringLiteral("256"));
    }

    void rowsFollowRenamesAndNewRuns() {
        filter_->setText(QStringLiteral("keep"));
        QVERIFY(shown().isEmpty());
        // The table model tells of changed rows on its timer.
        runs_->rename(sqrt_, QStringLiteral("keep me"));
        QTRY_COMPARE(shown(), (QStringList{"keep me"}));
        runs_->add(fixture_run(fixture_spec(4), "keep too", 3000, {0.8}));
        QCOMPARE(shown(), (QStringList{"keep me", "keep too"}));
        runs_->setTags(sgd_, {QStringLiteral("keep")});
        QTRY_COMPARE(shown(), (QStringList{"baseline", "keep me", "keep too"}));
    }
};

QTEST_GUILESS_MAIN(TestRunFilter)
#include "test_run_filter.moc"
