#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QtTest>

#include <set>

#include "experiment_form.h"
#include "run_group.h"
#include "window_test_support.h"

using scalelab::ExperimentForm;
using scalelab::RunSpec;
using scalelab::testing::two_cpu_cores;
using scalelab::testing::WindowUnderTest;

namespace {

// A spec the form accepts on any machine, quick to train: synthetic data needs no folder.
RunSpec valid_spec() {
    RunSpec spec;
    spec.model = "mlp";
    spec.dataset = "synthetic";
    spec.synthetic_train = 256;
    spec.synthetic_test = 128;
    spec.epochs = 1;
    spec.batch = 32;
    spec.seed = 5;
    return spec;
}

QSpinBox* repeats_of(const ExperimentForm& form) {
    return qobject_cast<QSpinBox*>(form.field(QStringLiteral("repeats")));
}

}  // namespace

class TestRepeatsForm : public QObject {
    Q_OBJECT

  private slots:
    void badRepeatsAreTheFieldsProblem_data() {
        QTest::addColumn<int>("repeats");
        QTest::newRow("0") << 0;
        QTest::newRow("-1") << -1;
        QTest::newRow("above the most") << scalelab::most_repeats + 1;
    }
    void badRepeatsAreTheFieldsProblem() {
        QFETCH(int, repeats);
        ExperimentForm form(two_cpu_cores());
        form.setSpec(valid_spec());
        QSpinBox* field = repeats_of(form);
        QVERIFY(field);
        QCOMPARE(field->value(), 1);
        QVERIFY(form.isValid());
        field->setValue(repeats);
        QVERIFY(!form.isValid());
        const QString expected =
            QStringLiteral("Repeats must be a whole number from 1 to %1, got %2")
                .arg(scalelab::most_repeats)
                .arg(repeats);
        QCOMPARE(form.fieldProblem(QStringLiteral("repeats")), expected);
        field->setValue(scalelab::most_repeats);
        QVERIFY(form.isValid());
        QCOMPARE(form.repeats(), scalelab::most_repeats);
    }

    void configFilesKeepRepeats() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("experiment.json"));
        ExperimentForm form(two_cpu_cores());
        form.setSpec(valid_spec());
        repeats_of(form)->setValue(4);
        QString error;
        QVERIFY2(form.saveConfig(path, &error), qPrintable(error));
        repeats_of(form)->setValue(1);
        QVERIFY2(form.loadConfig(path, &error), qPrintable(error));
        QCOMPARE(form.repeats(), 4);
        QCOMPARE(form.spec().seed, std::uint64_t(5));
    }

    void startQueuesOneGroupOverSeeds() {
        WindowUnderTest w;
        auto* form = w.window.findChild<ExperimentForm*>();
        QVERIFY(form);
        form->setSpec(valid_spec());
        repeats_of(*form)->setValue(3);
        emit form->startRequested();
        const std::vector<int> ids = w.runs.ids();
        QCOMPARE(ids.size(), std::size_t(3));
        const QString group = w.runs.find(ids.front())->group;
        QVERIFY(!group.isEmpty());
        for (std::size_t i = 0; i < ids.size(); ++i) {
            QCOMPARE(w.runs.find(ids[i])->spec.seed, 5 + i);
            QCOMPARE(w.runs.find(ids[i])->group, group);
        }
        w.runs.stopAll();
    }

    void aSweepRepeatsEachPointAsItsOwnGroup() {
        WindowUnderTest w;
        auto* form = w.window.findChild<ExperimentForm*>();
        QVERIFY(form);
        form->setSpec(valid_spec());
        repeats_of(*form)->setValue(2);
        auto* batches = qobject_cast<QLineEdit*>(form->field(QStringLiteral("sweep_batches")));
        QVERIFY(batches);
        batches->setText(QStringLiteral("32, 64"));
        QVERIFY(form->sweepValid());
        emit form->sweepRequested();
        const std::vector<int> ids = w.runs.ids();
        QCOMPARE(ids.size(), std::size_t(4));
        std::set<QString> groups;
        for (const int id : ids)
            groups.insert(w.runs.find(id)->group);
        QCOMPARE(groups.size(), std::size_t(2));
        QCOMPARE(w.runs.find(ids[0])->group, w.runs.find(ids[1])->group);
        QCOMPARE(w.runs.find(ids[1])->spec.seed, std::uint64_t(6));
        QCOMPARE(w.runs.find(ids[2])->spec.batch, 64);
        w.runs.stopAll();
    }
};

QTEST_MAIN(TestRepeatsForm)
#include "test_repeats_form.moc"
