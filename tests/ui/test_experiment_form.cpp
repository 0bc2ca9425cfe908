#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QScrollBar>
#include <QSignalSpy>
#include <QSpinBox>
#include <QTemporaryDir>
#include <QToolButton>
#include <QWheelEvent>
#include <QtTest>

#include <functional>
#include <memory>

#include "experiment_form.h"
#include "run_spec_json.h"
#include "train/spec_fields.h"
#include "window_test_support.h"

using scalelab::DeviceInventory;
using scalelab::ExperimentForm;
using scalelab::GpuDescription;
using scalelab::run_spec_json_keys;
using scalelab::run_spec_to_json;
using scalelab::RunSpec;
using scalelab::testing::two_cpu_cores;

namespace {

// A spec the form accepts on any machine: synthetic data needs no folder.
RunSpec valid_spec() {
    RunSpec spec;
    spec.model = "mlp";
    spec.dataset = "synthetic";
    spec.batch = 32;
    return spec;
}

// A form on screen (offscreen), showing valid_spec().
std::unique_ptr<ExperimentForm> shown_form(const DeviceInventory& inventory = two_cpu_cores()) {
    auto form = std::make_unique<ExperimentForm>(inventory);
    form->resize(380, 900);
    form->setSpec(valid_spec());
    form->show();
    if (!QTest::qWaitForWindowExposed(form.get()))
        qWarning("the form was not exposed");
    return form;
}

// What a user does to replace a field's text: select all, type.
void type(QWidget* editor, const QString& text) {
    QVERIFY(editor);
    QTest::keyClick(editor, Qt::Key_A, Qt::ControlModifier);
    QTest::keyClick(editor, Qt::Key_Backspace);
    QTest::keyClicks(editor, text);
}

// Types `text` and presses Enter: what commits a field read on commit (the global batch).
void commit(QWidget* editor, const QString& text) {
    type(editor, text);
    QTest::keyClick(editor, Qt::Key_Return);
}

void choose(QWidget* editor, const QString& entry) {
    auto* combo = qobject_cast<QComboBox*>(editor);
    QVERIFY(combo);
    const int index = combo->findText(entry);
    QVERIFY2(index >= 0, qPrintable(entry));
    combo->setCurrentIndex(index);
}

int value_of(QWidget* editor) {
    auto* spin = qobject_cast<QSpinBox*>(editor);
    return spin ? spin->value() : -1;
}

QPushButton* button(const ExperimentForm& form, const char* name) {
    return form.findChild<QPushButton*>(QLatin1String(name));
}

QLabel* label(const ExperimentForm& form, const QString& name) {
    return form.findChild<QLabel*>(name);
}

// The problem line under a field, as the user sees it.
QString shown_problem(const ExperimentForm& form, const QString& field) {
    QLabel* line = label(form, field + "_problem");
    return line && line->isVisibleTo(&form) ? line->text() : QString();
}

// A spec with every field away from its default (and valid), to catch a field the form drops.
RunSpec changed_spec() {
    RunSpec spec;
    spec.model = "resnet20";
    spec.width = 4;
    spec.dataset = "synthetic";
    spec.data_dir = "/data/somewhere";
    spec.synthetic_train = 1000;
    spec.synthetic_test = 300;
    spec.synthetic_channels = 3;
    spec.synthetic_size = 32;
    spec.augment = scalelab::Augmentation::CropFlip;
    spec.epochs = 7;
    spec.batch = 48;
    spec.devices = 3;
    spec.accumulation = 2;
    spec.bucket_mb = 12.5;
    spec.first_bucket_mb = 0.75;
    spec.overlap = false;
    spec.sync_bn = true;
    spec.zero_init_residual = true;
    spec.ghost_batch = 0;
    spec.noise_scale_beta = 0.95;
    spec.targets = {0.5, 0.75, 0.875};
    spec.optimizer = scalelab::OptimizerKind::Lamb;
    spec.lr = 0.123456789;
    spec.lr_scaling = scalelab::LrScaling::Sqrt;
    spec.reference_batch = 100;
    spec.momentum = 0.85;
    spec.nesterov = true;
    spec.weight_decay = 5e-5;
    spec.decay_norm_and_bias = false;
    spec.label_smoothing = 0.1;
    spec.beta1 = 0.8;
    spec.beta2 = 0.95;
    spec.eps = 1e-9;
    spec.trust_coefficient = 0.02;
    spec.larc = true;
    spec.trust_clamp = 10;
    spec.grad_averaging = true;
    spec.adapt_norm_and_bias = true;
    spec.schedule = scalelab::ScheduleKind::MultiStep;
    spec.gamma = 0.5;
    spec.step_epochs = 3;
    spec.milestones = {2, 5};
    spec.min_lr = 0.001;
    spec.poly_power = 1.5;
    spec.warmup = scalelab::WarmupKind::Constant;
    spec.warmup_length = 25;
    spec.warmup_unit = scalelab::WarmupUnit::Steps;
    spec.warmup_start_factor = 0.25;
    spec.seed = 18446744073709551557ull;  // above 2^63: written as a string
    spec.threads = 1;
    spec.target_accuracy = 0.8;
    spec.patience = 2;
    return spec;
}

QString write_file(const QTemporaryDir& dir, const QString& name, const QByteArray& content) {
    const QString path = dir.filePath(name);
    QFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(content) != content.size())
        qWarning("cannot write %s", qPrintable(path));
    return path;
}

}  // namespace

class TestExperimentForm : public QObject {
    Q_OBJECT

  private slots:
    void everyRunSpecFieldHasANamedEditor();
    void everyRowTakesItsLabelHelpAndShownWhenFromTheTable();
    void devicesAndBatchGiveTheGlobalBatch();
    void globalBatchIsReadWhenCommitted();
    void effectiveLrFollowsTheScalingRule();
    void indivisibleGlobalBatchIsMarkedAndChangesNothing();
    void badEntryDisablesStartUntilFixed_data();
    void badEntryDisablesStartUntilFixed();
    void datasetFolderMustHoldTheFiles();
    void spinBoxesKeepOutOfRangeAndTinyValues();
    void validateMessagesAppearAtTheirField();
    void everyValidateMessageHasItsField();
    void hiddenFieldProblemsAreListedAboveStart();
    void optimizerShowsOnlyItsSettings();
    void moreDevicesThanCoresWarns();
    void gpuInventoryLimitsDevices();
    void wheelChangesOnlyAFocusedField();
    void aFormAtItsMinimumWidthCutsNoField();
    void gpusWithoutAGpuSayWhy();
    void sweepExpandsDevicesOutermost();
    void badSweepEntryIsMarked();
    void startAndSweepEmitWhenValid();
    void setSpecShowsEveryFieldExactly();
    void savedConfigLoadsBackUnchanged();
    void badConfigNamesTheFieldAndLeavesTheFormUnchanged_data();
    void badConfigNamesTheFieldAndLeavesTheFormUnchanged();
};

void TestExperimentForm::everyRunSpecFieldHasANamedEditor() {
    ExperimentForm form(two_cpu_cores());
    for (const QString& key : run_spec_json_keys()) {
        QWidget* editor = form.field(key);
        QVERIFY2(editor, qPrintable(key));
        QCOMPARE(editor->objectName(), key);
    }
    QVERIFY(form.field("global_batch"));
    QVERIFY(!form.field("no_such_field"));
}

// The form's rows against the field table (spec_fields.h): each field's caption (or check box
// text) is its label, its tooltip starts with its help, and its row shows exactly when the field
// applies, over specs that switch every rule on and off.
void TestExperimentForm::everyRowTakesItsLabelHelpAndShownWhenFromTheTable() {
    auto form = shown_form();
    const auto text = [](std::string_view view) {
        return QString::fromUtf8(view.data(), qsizetype(view.size()));
    };
    for (const scalelab::SpecField& field : scalelab::spec_fields()) {
        QWidget* editor = form->field(text(field.key));
        QVERIFY2(editor, field.key.data());
        QVERIFY2(editor->toolTip().startsWith(text(field.help)), field.key.data());
        QString caption;
        if (auto* box = qobject_cast<QCheckBox*>(editor))
            caption = box->text();
        for (QLabel* label : form->findChildren<QLabel*>())
            if (label->buddy() == editor)
                caption = label->text();
        QCOMPARE(caption, text(field.label));
    }
    QTest::mouseClick(form->findChild<QWidget*>("advanced"), Qt::LeftButton);
    std::vector<scalelab::RunSpec> specs(6);
    specs[1].optimizer = scalelab::OptimizerKind::Lars;
    specs[1].schedule = scalelab::ScheduleKind::Step;
    specs[1].model = "wrn";
    specs[2].optimizer = scalelab::OptimizerKind::Lamb;
    specs[2].schedule = scalelab::ScheduleKind::MultiStep;
    specs[2].milestones = {2};
    specs[2].dataset = "synthetic";
    specs[3].optimizer = scalelab::OptimizerKind::NovoGrad;
    specs[3].schedule = scalelab::ScheduleKind::Cosine;
    specs[3].lr_scaling = scalelab::LrScaling::Linear;
    specs[4].optimizer = scalelab::OptimizerKind::AdamW;
    specs[4].schedule = scalelab::ScheduleKind::Poly;
    specs[4].device = scalelab::DeviceKind::Gpu;
    specs[5].schedule = scalelab::ScheduleKind::Exp;
    for (const scalelab::RunSpec& spec : specs) {
        form->setSpec(spec);
        for (const scalelab::SpecField& field : scalelab::spec_fields())
            QVERIFY2(
                form->field(text(field.key))->isVisibleTo(form.get()) == field.applies_to(spec),
                field.key.data());
    }
}

void TestExperimentForm::devicesAndBatchGiveTheGlobalBatch() {
    auto form = shown_form();
    type(form->field("devices"), "4");
    type(form->field("batch"), "64");
    QCOMPARE(value_of(form->field("global_batch")), 256);

    commit(form->field("global_batch"), "512");
    QCOMPARE(value_of(form->field("batch")), 128);
    QCOMPARE(form->spec().batch, 128);
    QCOMPARE(form->spec().devices, 4);
    QVERIFY(form->isValid());

    // Accumulation multiplies in too, and a global batch must then fit it as well.
    type(form->field("accumulation"), "2");
    QCOMPARE(value_of(form->field("global_batch")), 1024);
    commit(form->field("global_batch"), "1004");  // divisible by 4 devices, not by 4 x 2
    QVERIFY2(form->fieldProblem("global_batch").contains("the nearest that are: 1000 or 1008"),
             qPrintable(form->fieldProblem("global_batch")));
    QCOMPARE(form->spec().batch, 128);
}

void TestExperimentForm::globalBatchIsReadWhenCommitted() {
    auto form = shown_form();
    type(form->field("devices"), "2");
    type(form->field("batch"), "64");
    // On the way to 255 the field holds 2 and 25: nothing changes while typing.
    type(form->field("global_batch"), "255");
    QCOMPARE(value_of(form->field("batch")), 64);
    QVERIFY(form->fieldProblem("global_batch").isEmpty());
    QTest::keyClick(form->field("global_batch"), Qt::Key_Return);
    QCOMPARE(value_of(form->field("batch")), 64);
    QVERIFY2(form->fieldProblem("global_batch").contains("the nearest that are: 254 or 256"),
             qPrintable(form->fieldProblem("global_batch")));
    commit(form->field("global_batch"), "256");
    QCOMPARE(value_of(form->field("batch")), 128);
    QVERIFY(form->fieldProblem("global_batch").isEmpty());
}

void TestExperimentForm::effectiveLrFollowsTheScalingRule() {
    auto form = shown_form();
    QLabel* effective = label(*form, "effective_lr");
    QVERIFY(effective);
    type(form->field("devices"), "4");
    type(form->field("batch"), "128");
    type(form->field("lr"), "0.1");
    choose(form->field("lr_scaling"), "linear");
    type(form->field("reference_batch"), "256");
    QCOMPARE(form->spec().lr, 0.1);
    QVERIFY2(effective->text().contains("= 0.2 "), qPrintable(effective->text()));
    QVERIFY2(effective->text().contains("512/256"), qPrintable(effective->text()));

    choose(form->field("lr_scaling"), "sqrt");
    QVERIFY2(effective->text().contains("= 0.1414 "), qPrintable(effective->text()));

    // Every input of the rule updates it: two devices halve the global batch.
    choose(form->field("lr_scaling"), "linear");
    type(form->field("devices"), "2");
    QVERIFY2(effective->text().contains("= 0.1 "), qPrintable(effective->text()));
    choose(form->field("lr_scaling"), "none");
    QVERIFY2(effective->text().contains("= 0.1 (no scaling)"), qPrintable(effective->text()));
}

void TestExperimentForm::indivisibleGlobalBatchIsMarkedAndChangesNothing() {
    auto form = shown_form();
    type(form->field("devices"), "3");
    const QJsonObject before = run_spec_to_json(form->spec());
    QPushButton* start = button(*form, "start");
    QVERIFY(start->isEnabled());

    commit(form->field("global_batch"), "100");
    const QString problem = form->fieldProblem("global_batch");
    QVERIFY2(problem.contains("3 devices"), qPrintable(problem));
    QVERIFY2(problem.contains("the nearest that are: 99 or 102"), qPrintable(problem));
    QCOMPARE(shown_problem(*form, "global_batch"), problem);
    QCOMPARE(form->field("global_batch")->property("problem").toBool(), true);
    QCOMPARE(form->field("global_batch")->toolTip(), problem);
    QVERIFY(!start->isEnabled());
    QVERIFY(!form->isValid());
    QCOMPARE(run_spec_to_json(form->spec()), before);
    QCOMPARE(value_of(form->field("batch")), 32);

    commit(form->field("global_batch"), "192");
    QCOMPARE(form->spec().batch, 64);
    QVERIFY(form->fieldProblem("global_batch").isEmpty());
    QCOMPARE(form->field("global_batch")->property("problem").toBool(), false);
    QVERIFY(start->isEnabled());
}

void TestExperimentForm::badEntryDisablesStartUntilFixed_data() {
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("bad");
    QTest::addColumn<QString>("reason");
    QTest::addColumn<QString>("good");
    QTest::newRow("batch 0") << "batch"
                             << "0"
                             << "batch size must be at least 1"
                             << "64";
    QTest::newRow("lr 0") << "lr"
                          << "0"
                          << "learning rate must be above 0"
                          << "0.05";
    QTest::newRow("batch above the engine's limit") << "batch"
                                                    << "70000"
                                                    << "65536"
                                                    << "64";
    QTest::newRow("epochs 0") << "epochs"
                              << "0"
                              << "epochs must be a whole number of at least 1"
                              << "3";
    QTest::newRow("momentum 1") << "momentum"
                                << "1"
                                << "momentum must be a number in [0, 1)"
                                << "0.9";
}

void TestExperimentForm::badEntryDisablesStartUntilFixed() {
    QFETCH(QString, field);
    QFETCH(QString, bad);
    QFETCH(QString, reason);
    QFETCH(QString, good);
    auto form = shown_form();
    QPushButton* start = button(*form, "start");
    QSignalSpy validity(form.get(), &ExperimentForm::validityChanged);

    type(form->field(field), bad);
    QVERIFY(!start->isEnabled());
    QVERIFY(!form->isValid());
    const QString problem = shown_problem(*form, field);
    QVERIFY2(problem.contains(reason), qPrintable(problem));
    QVERIFY(form->field(field)->property("problem").toBool());
    QVERIFY(form->problems().contains(problem));
    QVERIFY(!validity.isEmpty());
    QCOMPARE(validity.last().at(0).toBool(), false);

    type(form->field(field), good);
    QVERIFY2(form->isValid(), qPrintable(form->problems().join('\n')));
    QVERIFY(start->isEnabled());
    QVERIFY(shown_problem(*form, field).isEmpty());
    QCOMPARE(validity.last().at(0).toBool(), true);
}

void TestExperimentForm::datasetFolderMustHoldTheFiles() {
    auto form = shown_form();
    QPushButton* start = button(*form, "start");
    choose(form->field("dataset"), "mnist");
    QVERIFY(!start->isEnabled());
    QVERIFY2(form->fieldProblem("data_dir").contains("no default folder"),
             qPrintable(form->fieldProblem("data_dir")));

    type(form->field("data_dir"), "/nonexistent/scalelab-mnist");
    QVERIFY(!start->isEnabled());
    QVERIFY2(shown_problem(*form, "data_dir").contains("does not exist"),
             qPrintable(shown_problem(*form, "data_dir")));
    // The advice names the form's field too, not only the command line's flag.
    QVERIFY2(shown_problem(*form, "data_dir").contains("Folder in the window"),
             qPrintable(shown_problem(*form, "data_dir")));

    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    write_file(dir, "train-images-idx3-ubyte.gz", "x");
    write_file(dir, "train-labels-idx1-ubyte", "x");
    write_file(dir, "t10k-images-idx3-ubyte", "x");
    type(form->field("data_dir"), dir.path());
    const QString missing = shown_problem(*form, "data_dir");
    // Only the missing file is listed as lacking; the advice after it names all four.
    QVERIFY2(missing.contains("lacks t10k-labels-idx1-ubyte[.gz];"), qPrintable(missing));
    QVERIFY(!start->isEnabled());

    write_file(dir, "t10k-labels-idx1-ubyte.gz", "x");
    type(form->field("data_dir"), dir.path());
    QVERIFY2(form->isValid(), qPrintable(form->problems().join('\n')));
    QVERIFY(start->isEnabled());

    // CIFAR-10 needs its own files; the official archive's subfolder is found too.
    choose(form->field("dataset"), "cifar10");
    QVERIFY(form->fieldProblem("data_dir").contains("test_batch.bin"));
    QVERIFY(QDir(dir.path()).mkdir("cifar-10-batches-bin"));
    for (const char* name : {"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                             "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"})
        write_file(dir, QString("cifar-10-batches-bin/") + name, "x");
    type(form->field("data_dir"), dir.path());
    QVERIFY2(form->isValid(), qPrintable(form->problems().join('\n')));

    // Synthetic data needs no folder: the field is hidden and its problem gone.
    type(form->field("data_dir"), "/nonexistent");
    QVERIFY(!form->isValid());
    choose(form->field("dataset"), "synthetic");
    QVERIFY(!form->field("data_dir")->isVisibleTo(form.get()));
    QVERIFY(form->isValid());
}

void TestExperimentForm::spinBoxesKeepOutOfRangeAndTinyValues() {
    auto form = shown_form();
    type(form->field("batch"), "70000");
    QCOMPARE(form->spec().batch, 70000);
    type(form->field("devices"), "40");
    QCOMPARE(form->spec().devices, 40);
    QVERIFY(form->fieldProblem("devices").contains("16"));
    type(form->field("weight_decay"), "0.00001");
    QCOMPARE(form->spec().weight_decay, 1e-5);
    type(form->field("lr"), "2.5e-7");
    QCOMPARE(form->spec().lr, 2.5e-7);

    // In the Advanced section, with a unit suffix.
    QTest::mouseClick(form->findChild<QWidget*>("advanced"), Qt::LeftButton);
    QVERIFY(form->field("bucket_mb")->isVisibleTo(form.get()));
    type(form->field("bucket_mb"), "12.5");
    QCOMPARE(form->spec().bucket_mb, 12.5);
    QVERIFY(qobject_cast<QAbstractSpinBox*>(form->field("bucket_mb"))->text().endsWith(" MB"));
}

void TestExperimentForm::validateMessagesAppearAtTheirField() {
    auto form = shown_form();
    struct Case {
        const char* field;
        std::function<void(RunSpec&)> spoil;
    };
    const Case cases[] = {
        {"width", [](RunSpec& s) { s.width = 0; }},
        {"nesterov",
         [](RunSpec& s) {
             s.nesterov = true;
             s.momentum = 0;
         }},
        {"warmup_length", [](RunSpec& s) { s.warmup_length = 5; }},  // longer than 2 epochs
        {"milestones", [](RunSpec& s) { s.schedule = scalelab::ScheduleKind::MultiStep; }},
        {"model", [](RunSpec& s) { s.model = "transformer"; }},
        {"synthetic_size", [](RunSpec& s) { s.synthetic_size = 30; }},
    };
    for (const Case& c : cases) {
        RunSpec spec = valid_spec();
        c.spoil(spec);
        form->setSpec(spec);
        QVERIFY2(!form->fieldProblem(c.field).isEmpty(), c.field);
        QVERIFY(!button(*form, "start")->isEnabled());
    }
    form->setSpec(valid_spec());
    type(form->field("seed"), "12x");
    QVERIFY2(form->fieldProblem("seed").contains("'12x'"), qPrintable(form->fieldProblem("seed")));
    QVERIFY(!form->isValid());
}

void TestExperimentForm::everyValidateMessageHasItsField() {
    RunSpec wrong;
    wrong.model = "transformer";
    wrong.width = 0;
    wrong.dataset = "synthetic";
    wrong.synthetic_train = 0;
    wrong.synthetic_test = 0;
    wrong.synthetic_channels = 2;
    wrong.synthetic_size = 30;
    wrong.epochs = 0;
    wrong.devices = 0;
    wrong.accumulation = 0;
    wrong.bucket_mb = 0;
    wrong.first_bucket_mb = 0;
    wrong.momentum = -1;
    wrong.nesterov = true;
    wrong.weight_decay = -1;
    wrong.label_smoothing = 1;
    wrong.gamma = 0;
    wrong.step_epochs = 0;
    wrong.schedule = scalelab::ScheduleKind::MultiStep;
    wrong.min_lr = -1;
    wrong.warmup = scalelab::WarmupKind::PerEpoch;
    wrong.warmup_unit = scalelab::WarmupUnit::Steps;
    wrong.warmup_length = 0.5;
    wrong.reference_batch = 0;
    wrong.beta1 = 1;
    wrong.beta2 = 1;
    wrong.eps = 0;
    wrong.trust_coefficient = 0;
    wrong.trust_clamp = -1;
    wrong.poly_power = 0;
    wrong.ghost_batch = 3;
    wrong.batch = 6;
    wrong.sync_bn = true;
    wrong.zero_init_residual = true;
    wrong.noise_scale_beta = 1;
    wrong.targets = {2};
    wrong.warmup_start_factor = 2;
    wrong.threads = -1;
    wrong.target_accuracy = 2;
    wrong.patience = 0;
    RunSpec wrong_too = valid_spec();  // what cannot go wrong at the same time as the above
    wrong_too.warmup_length = 5;
    wrong_too.schedule = scalelab::ScheduleKind::MultiStep;
    wrong_too.milestones = {0, 3, 2};
    wrong_too.ghost_batch = 5;

    ExperimentForm form(two_cpu_cores());
    QStringList fields = run_spec_json_keys();
    fields << "global_batch"
           << "data_dir";
    for (const RunSpec& spec : {wrong, wrong_too}) {
        form.setSpec(spec);
        QVERIFY(!form.isValid());
        for (const std::string& message : spec.validate()) {
            const auto at_field = [&](const QString& f) {
                return form.fieldProblem(f).contains(QString::fromStdString(message));
            };
            QVERIFY2(std::any_of(fields.begin(), fields.end(), at_field), message.c_str());
        }
    }
}

void TestExperimentForm::hiddenFieldProblemsAreListedAboveStart() {
    auto form = shown_form();
    QLabel* listed = label(*form, "problems");
    QVERIFY(listed);
    QVERIFY(!listed->isVisibleTo(form.get()));

    RunSpec spec = valid_spec();
    spec.ghost_batch = 5;  // does not divide the batch of 32
    form->setSpec(spec);
    form->setAdvancedVisible(false);
    QVERIFY(!form->field("ghost_batch")->isVisibleTo(form.get()));
    QVERIFY(!button(*form, "start")->isEnabled());
    QVERIFY(listed->isVisibleTo(form.get()));
    QVERIFY2(listed->text().contains("ghost_batch"), qPrintable(listed->text()));

    // A setting of another optimizer is hidden with its row, its problem listed too.
    spec = valid_spec();
    spec.optimizer = scalelab::OptimizerKind::Sgd;
    spec.beta2 = 1.5;
    form->setSpec(spec);
    QVERIFY(listed->text().contains("beta2"));
    QVERIFY(!button(*form, "start")->isEnabled());
}

void TestExperimentForm::optimizerShowsOnlyItsSettings() {
    auto form = shown_form();
    auto shown = [&](const char* name) { return form->field(name)->isVisibleTo(form.get()); };
    choose(form->field("optimizer"), "sgd");
    QVERIFY(shown("momentum") && shown("nesterov"));
    QVERIFY(!shown("beta1") && !shown("trust_coefficient") && !shown("trust_clamp"));
    choose(form->field("optimizer"), "lars");
    QVERIFY(shown("momentum") && shown("trust_coefficient") && shown("larc"));
    QVERIFY(!shown("eps"));
    choose(form->field("optimizer"), "lamb");
    QVERIFY(shown("beta1") && shown("beta2") && shown("eps") && shown("trust_clamp"));
    QVERIFY(!shown("momentum") && !shown("grad_averaging"));
    choose(form->field("optimizer"), "novograd");
    QVERIFY(shown("grad_averaging") && !shown("trust_clamp"));
    choose(form->field("schedule"), "cosine");
    QVERIFY(shown("min_lr") && !shown("milestones") && !shown("gamma"));
    choose(form->field("schedule"), "multistep");
    QVERIFY(shown("milestones") && shown("gamma") && !shown("min_lr"));

    choose(form->field("model"), "cnn");
    QVERIFY(!shown("width"));
    choose(form->field("model"), "wrn");
    QVERIFY(shown("width"));
}

void TestExperimentForm::moreDevicesThanCoresWarns() {
    auto form = shown_form();
    QLabel* warning = label(*form, "device_warning");
    QVERIFY(warning);
    type(form->field("devices"), "2");
    QVERIFY(!warning->isVisibleTo(form.get()));
    QCOMPARE(label(*form, "cores_note")->text(), QString("2 devices × 1 thread = 2 of 2 cores"));
    type(form->field("devices"), "3");
    QVERIFY(warning->isVisibleTo(form.get()));
    QVERIFY2(warning->text().contains("3 threads on 2 cores"), qPrintable(warning->text()));
    QVERIFY(form->isValid());  // allowed, only slower
    // Threads count per device: two devices of two threads want four cores.
    type(form->field("devices"), "2");
    type(form->field("threads"), "2");
    QVERIFY2(warning->text().contains("4 threads on 2 cores"), qPrintable(warning->text()));
    QCOMPARE(label(*form, "cores_note")->text(), QString("2 devices × 2 threads = 4 of 2 cores"));
    // 0 shares the cores: one each.
    type(form->field("threads"), "0");
    QVERIFY(!warning->isVisibleTo(form.get()));
    QCOMPARE(label(*form, "cores_note")->text(), QString("2 devices × 1 thread = 2 of 2 cores"));
}

// One notch of the mouse wheel over the middle of `editor` (delta > 0: up).
void wheel(QWidget* editor, int delta) {
    const QPointF middle(editor->width() / 2.0, editor->height() / 2.0);
    QWheelEvent event(middle, editor->mapToGlobal(middle), QPoint(), QPoint(0, delta), Qt::NoButton,
                      Qt::NoModifier, Qt::NoScrollPhase, false);
    QApplication::sendEvent(editor, &event);
}

// The wheel over a field the user has not clicked into changes nothing (the event is left
// unaccepted: a real one, which Qt marks spontaneous, then scrolls the form; one sent by a test
// is not passed on, so the scrolling itself is seen under xvfb, not here).
void TestExperimentForm::wheelChangesOnlyAFocusedField() {
    auto form = shown_form();
    const RunSpec before = form->spec();
    wheel(form->field("lr"), -120);
    wheel(form->field("optimizer"), -120);
    QCOMPARE(form->spec().lr, before.lr);
    QCOMPARE(form->spec().optimizer, before.optimizer);
    // A field the user has clicked into takes the wheel.
    form->activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(form.get()));
    form->field("lr")->setFocus();
    QVERIFY(form->field("lr")->hasFocus());
    wheel(form->field("lr"), 120);
    QVERIFY(form->spec().lr > before.lr);
}

// The form never scrolls sideways: its minimum width is that of its widest row, so that a dock
// at that width shows every field whole (spin box arrows, the Browse button), Advanced open too.
void TestExperimentForm::aFormAtItsMinimumWidthCutsNoField() {
    auto form = shown_form();
    auto* scroll = form->findChild<QScrollArea*>();
    QVERIFY(scroll);
    const auto cut_off = [&] {
        QStringList cut;
        for (QWidget* editor : scroll->widget()->findChildren<QWidget*>()) {
            if (editor->objectName().isEmpty() || !editor->isVisibleTo(form.get()))
                continue;
            if (editor->mapTo(scroll->viewport(), QPoint(editor->width(), 0)).x() >
                scroll->viewport()->width())
                cut << editor->objectName();
        }
        return cut.join(QStringLiteral(", "));
    };
    form->resize(form->minimumSizeHint().width(), 700);
    QTest::qWait(20);
    QVERIFY2(cut_off().isEmpty(), qPrintable(cut_off()));
    auto* advanced = form->findChild<QToolButton*>(QStringLiteral("advanced"));
    QVERIFY(advanced);
    advanced->click();
    QTest::qWait(20);
    form->resize(form->minimumSizeHint().width(), 700);
    QTest::qWait(20);
    QVERIFY2(cut_off().isEmpty(), qPrintable(cut_off()));
    QCOMPARE(scroll->horizontalScrollBar()->maximum(), 0);
    // The check sees a cut: narrower than the minimum, the widest row is cut off.
    form->resize(form->minimumSizeHint().width() - 80, 700);
    QTest::qWait(20);
    QVERIFY(!cut_off().isEmpty());
}

void TestExperimentForm::gpuInventoryLimitsDevices() {
    DeviceInventory inventory;
    inventory.cpu_cores = 16;
    GpuDescription gpu;
    gpu.name = "Test GPU";
    gpu.memory_bytes = 24ull << 30;
    inventory.gpus = {gpu, gpu};
    inventory.gpus[1].index = 1;
    auto form = shown_form(inventory);
    // The GPU-only settings (one of them in the Advanced section) show for GPU runs only.
    QTest::mouseClick(form->findChild<QWidget*>("advanced"), Qt::LeftButton);
    const char* const gpu_only[] = {"gpus", "tf32", "deterministic", "collective_timeout_s"};
    for (const char* name : gpu_only)
        QVERIFY2(!form->field(name)->isVisibleTo(form.get()), name);
    choose(form->field("device"), "gpu");
    for (const char* name : gpu_only)
        QVERIFY2(form->field(name)->isVisibleTo(form.get()), name);
    type(form->field("devices"), "2");
    QVERIFY(form->isValid());
    type(form->field("collective_timeout_s"), "0.5");
    QCOMPARE(form->fieldProblem("collective_timeout_s"),
             QString("collective_timeout_s must be a number in [1, 86400] (got 0.5)"));
    type(form->field("collective_timeout_s"), "60");
    QVERIFY(form->isValid());
    QCOMPARE(form->spec().collective_timeout_s, 60.0);
    QCOMPARE(form->spec().device, scalelab::DeviceKind::Gpu);
    type(form->field("devices"), "3");
    QCOMPARE(form->fieldProblem("devices"),
             QString("3 GPUs asked for, but this machine has 2: ask for at most 2"));
    QVERIFY(!label(*form, "device_warning")->isVisibleTo(form.get()));
    // A list names the GPUs; one that is not there is marked on the list.
    type(form->field("devices"), "2");
    type(form->field("gpus"), "1, 2");
    QCOMPARE(form->fieldProblem("gpus"),
             QString("GPU 2 does not exist: this machine has GPUs 0 and 1"));
    type(form->field("gpus"), "1, 0");
    QVERIFY(form->isValid());
    QCOMPARE(form->spec().gpus, (std::vector<int>{1, 0}));
}

void TestExperimentForm::gpusWithoutAGpuSayWhy() {
    auto form = shown_form();
    choose(form->field("device"), "gpu");
    QVERIFY(!form->isValid());
    QCOMPARE(form->fieldProblem("device"),
             QString("1 GPU asked for, but no GPU can be used here: ") +
                 QString::fromStdString(two_cpu_cores().no_gpu_reason));
}

void TestExperimentForm::sweepExpandsDevicesOutermost() {
    auto form = shown_form();
    type(form->field("lr"), "0.2");
    QPushButton* queue = button(*form, "queue_sweep");
    QVERIFY(queue->text().contains("1 run"));

    type(form->field("sweep_devices"), "1,2");
    type(form->field("sweep_batches"), "32, 64");
    type(form->field("sweep_lrs"), "0.1");
    QVERIFY2(queue->text().contains("4 runs"), qPrintable(queue->text()));
    QVERIFY(form->sweepValid());
    QVERIFY(queue->isEnabled());

    const std::vector<RunSpec> runs = form->sweepSpecs();
    QCOMPARE(runs.size(), std::size_t(4));
    const std::pair<int, int> expected[] = {{1, 32}, {1, 64}, {2, 32}, {2, 64}};
    for (std::size_t i = 0; i < runs.size(); ++i) {
        QCOMPARE(runs[i].devices, expected[i].first);
        QCOMPARE(runs[i].batch, expected[i].second);
        QCOMPARE(runs[i].lr, 0.1);
        // Everything else is the form's.
        RunSpec same = runs[i];
        same.devices = form->spec().devices;
        same.batch = form->spec().batch;
        same.lr = form->spec().lr;
        QCOMPARE(run_spec_to_json(same), run_spec_to_json(form->spec()));
    }

    // An empty list is the form's value.
    type(form->field("sweep_lrs"), "");
    QCOMPARE(form->sweepSpecs().at(0).lr, 0.2);
}

void TestExperimentForm::badSweepEntryIsMarked() {
    auto form = shown_form();
    QPushButton* queue = button(*form, "queue_sweep");
    type(form->field("sweep_lrs"), "0.1, x");
    QVERIFY2(shown_problem(*form, "sweep_lrs").contains("'x' is not a number"),
             qPrintable(form->fieldProblem("sweep_lrs")));
    QVERIFY(form->field("sweep_lrs")->property("problem").toBool());
    QVERIFY(!form->sweepValid());
    QVERIFY(form->sweepSpecs().empty());
    QVERIFY(!queue->isEnabled());
    QVERIFY(button(*form, "start")->isEnabled());  // the form itself is fine

    type(form->field("sweep_lrs"), "0.1");
    type(form->field("sweep_devices"), "1, 40");
    QVERIFY2(shown_problem(*form, "sweep_devices").contains("40"),
             qPrintable(form->fieldProblem("sweep_devices")));
    QVERIFY(!queue->isEnabled());
    type(form->field("sweep_devices"), "1, 2");
    QVERIFY(form->sweepValid());
    QVERIFY(queue->isEnabled());

    // A sweep too large to queue says so above Start (and leaves Start alone).
    const QString eleven = "1 2 3 4 5 6 7 8 9 10 11";
    type(form->field("sweep_devices"), eleven);
    type(form->field("sweep_batches"), eleven);
    type(form->field("sweep_lrs"), "0.01 0.02 0.03 0.04 0.05 0.06 0.07 0.08 0.09 0.1 0.11");
    QVERIFY2(queue->text().contains("1331 runs"), qPrintable(queue->text()));
    QVERIFY(!queue->isEnabled());
    QVERIFY(!form->sweepValid());
    QVERIFY(label(*form, "problems")->text().contains("1331 runs"));
    QVERIFY(button(*form, "start")->isEnabled());
}

void TestExperimentForm::startAndSweepEmitWhenValid() {
    auto form = shown_form();
    QSignalSpy start(form.get(), &ExperimentForm::startRequested);
    QSignalSpy sweep(form.get(), &ExperimentForm::sweepRequested);
    QSignalSpy changed(form.get(), &ExperimentForm::specChanged);
    QTest::mouseClick(button(*form, "start"), Qt::LeftButton);
    QCOMPARE(start.size(), 1);
    type(form->field("sweep_devices"), "1 2");
    QVERIFY(!changed.isEmpty());
    QTest::mouseClick(button(*form, "queue_sweep"), Qt::LeftButton);
    QCOMPARE(sweep.size(), 1);

    type(form->field("batch"), "0");
    QTest::mouseClick(button(*form, "start"), Qt::LeftButton);
    QTest::mouseClick(button(*form, "queue_sweep"), Qt::LeftButton);
    QCOMPARE(start.size(), 1);
    QCOMPARE(sweep.size(), 1);
}

void TestExperimentForm::setSpecShowsEveryFieldExactly() {
    ExperimentForm form(two_cpu_cores());
    for (const RunSpec& spec : {RunSpec{}, valid_spec(), changed_spec()}) {
        form.setSpec(spec);
        QCOMPARE(run_spec_to_json(form.spec()), run_spec_to_json(spec));
    }
    // Invalid values too: shown as they are, and marked.
    RunSpec bad = changed_spec();
    bad.batch = -5;
    bad.model = "transformer";
    bad.lr = -0.5;
    form.setSpec(bad);
    QCOMPARE(run_spec_to_json(form.spec()), run_spec_to_json(bad));
    QVERIFY(!form.fieldProblem("batch").isEmpty());
    QVERIFY(form.fieldProblem("model").contains("transformer"));
    QVERIFY(!form.fieldProblem("lr").isEmpty());
}

void TestExperimentForm::savedConfigLoadsBackUnchanged() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    for (const RunSpec& spec : {RunSpec{}, changed_spec()}) {
        ExperimentForm saver(two_cpu_cores());
        saver.setSpec(spec);
        const QString path = dir.filePath("experiment.json");
        QString error;
        QVERIFY2(saver.saveConfig(path, &error), qPrintable(error));

        // The file is the CLI's format: run_spec_to_json, indented.
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray content = file.readAll();
        QVERIFY(content.contains("\n    \""));
        QCOMPARE(QJsonDocument::fromJson(content).object(), run_spec_to_json(spec));

        ExperimentForm loader(two_cpu_cores());
        QVERIFY2(loader.loadConfig(path, &error), qPrintable(error));
        QCOMPARE(run_spec_to_json(loader.spec()), run_spec_to_json(spec));
    }

    // A field whose text cannot be read is not saved as something else.
    auto form = shown_form();
    choose(form->field("schedule"), "multistep");
    type(form->field("milestones"), "3, soon");
    QString error;
    QVERIFY(!form->saveConfig(dir.filePath("unreadable.json"), &error));
    QVERIFY2(error.contains("milestones") && error.contains("'soon'"), qPrintable(error));
    QVERIFY(!QFile::exists(dir.filePath("unreadable.json")));
}

void TestExperimentForm::badConfigNamesTheFieldAndLeavesTheFormUnchanged_data() {
    QTest::addColumn<QByteArray>("content");
    QTest::addColumn<QString>("named");
    QTest::newRow("unknown key") << QByteArray(R"({"batch": 64, "colour": "red"})") << "colour";
    QTest::newRow("bad enum") << QByteArray(R"({"lr": 0.5, "optimizer": "adam"})") << "optimizer";
    QTest::newRow("wrong type") << QByteArray(R"({"epochs": "ten"})") << "epochs";
    QTest::newRow("not JSON") << QByteArray("{\"batch\": 64,\n \"lr\": }") << "line 2";
}

void TestExperimentForm::badConfigNamesTheFieldAndLeavesTheFormUnchanged() {
    QFETCH(QByteArray, content);
    QFETCH(QString, named);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = write_file(dir, "bad.json", content);

    ExperimentForm form(two_cpu_cores());
    form.setSpec(changed_spec());
    QString error;
    QVERIFY(!form.loadConfig(path, &error));
    QVERIFY2(error.contains(named), qPrintable(error));
    QCOMPARE(run_spec_to_json(form.spec()), run_spec_to_json(changed_spec()));

    QVERIFY(!form.loadConfig(dir.filePath("missing.json"), &error));
    QVERIFY2(error.contains("missing.json"), qPrintable(error));
}

QTEST_MAIN(TestExperimentForm)
#include "test_experiment_form.moc"
