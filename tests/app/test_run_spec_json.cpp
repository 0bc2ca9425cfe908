#include <QJsonDocument>
#include <QtTest>

#include "error.h"
#include "run_spec_json.h"

using scalelab::Error;
using scalelab::RunSpec;

namespace {

// Every field different from its default, so that a field the mapping forgets shows up.
RunSpec spec_with_every_field_changed() {
    RunSpec s;
    s.model = "wrn";
    s.width = 4;
    s.dataset = "cifar10";
    s.data_dir = "/data/cifar-10-batches-bin";
    s.synthetic_train = 1000;
    s.synthetic_test = 200;
    s.synthetic_channels = 3;
    s.synthetic_size = 32;
    s.augment = true;
    s.epochs = 90;
    s.batch = 512;
    s.devices = 4;
    s.accumulation = 2;
    s.bucket_mb = 50;
    s.first_bucket_mb = 0.5;
    s.overlap = false;
    s.sync_bn = true;
    s.lr = 0.4;
    s.momentum = 0.85;
    s.nesterov = true;
    s.weight_decay = 5e-4;
    s.decay_norm_and_bias = false;
    s.label_smoothing = 0.1;
    s.schedule = scalelab::ScheduleKind::MultiStep;
    s.gamma = 0.2;
    s.step_epochs = 7;
    s.milestones = {30, 60, 80};
    s.min_lr = 1e-5;
    s.warmup = 500;
    s.warmup_unit = scalelab::WarmupUnit::Steps;
    s.warmup_start_factor = 0.01;
    s.seed = 0xFFFF'FFFF'FFFF'FFF0ull;  // above int64: exercises the string form
    s.threads = 3;
    s.target_accuracy = 0.75;
    s.patience = 2;
    return s;
}

bool same(const RunSpec& a, const RunSpec& b) {
    return a.model == b.model && a.width == b.width && a.dataset == b.dataset &&
           a.data_dir == b.data_dir && a.synthetic_train == b.synthetic_train &&
           a.synthetic_test == b.synthetic_test && a.synthetic_channels == b.synthetic_channels &&
           a.synthetic_size == b.synthetic_size && a.augment == b.augment && a.epochs == b.epochs &&
           a.batch == b.batch && a.devices == b.devices && a.accumulation == b.accumulation &&
           a.bucket_mb == b.bucket_mb && a.first_bucket_mb == b.first_bucket_mb &&
           a.overlap == b.overlap && a.sync_bn == b.sync_bn && a.lr == b.lr &&
           a.momentum == b.momentum && a.nesterov == b.nesterov &&
           a.weight_decay == b.weight_decay && a.decay_norm_and_bias == b.decay_norm_and_bias &&
           a.label_smoothing == b.label_smoothing && a.schedule == b.schedule &&
           a.gamma == b.gamma && a.step_epochs == b.step_epochs && a.milestones == b.milestones &&
           a.min_lr == b.min_lr && a.warmup == b.warmup && a.warmup_unit == b.warmup_unit &&
           a.warmup_start_factor == b.warmup_start_factor && a.seed == b.seed &&
           a.threads == b.threads && a.target_accuracy == b.target_accuracy &&
           a.patience == b.patience;
}

QByteArray to_document(const RunSpec& spec) {
    return QJsonDocument(scalelab::run_spec_to_json(spec)).toJson();
}

// The message of the Error that reading `document` throws; fails the test when none is thrown.
QString error_of(const QByteArray& document) {
    try {
        scalelab::run_spec_from_json(document);
    } catch (const Error& error) {
        if (error.kind() != scalelab::ErrorKind::InvalidSpec)
            return "wrong kind: " + QString(error.what());
        return QString::fromStdString(error.what());
    }
    return "no error";
}

}  // namespace

class TestRunSpecJson : public QObject {
    Q_OBJECT

  private slots:
    void round_trip_keeps_every_field() {
        const RunSpec changed = spec_with_every_field_changed();
        QVERIFY(!same(changed, RunSpec{}));
        QVERIFY(same(scalelab::run_spec_from_json(to_document(changed)), changed));
    }

    void every_field_has_a_key_named_as_the_field() {
        const QJsonObject json = scalelab::run_spec_to_json(spec_with_every_field_changed());
        QCOMPARE(json.size(), 35);
        QCOMPARE(json.value("schedule").toString(), QString("multistep"));
        QCOMPARE(json.value("warmup_unit").toString(), QString("steps"));
        QCOMPARE(json.value("decay_norm_and_bias").toBool(), false);
        QCOMPARE(json.value("milestones").toArray().size(), 3);
        QCOMPARE(json.value("devices").toInt(), 4);
        QCOMPARE(json.value("accumulation").toInt(), 2);
        QCOMPARE(json.value("bucket_mb").toDouble(), 50.0);
        QCOMPARE(json.value("first_bucket_mb").toDouble(), 0.5);
        QCOMPARE(json.value("overlap").toBool(), false);
        QCOMPARE(json.value("sync_bn").toBool(), true);
        QCOMPARE(QStringList(json.keys()).size(), scalelab::run_spec_json_keys().size());
    }

    void small_seed_is_a_number() {
        RunSpec spec;
        spec.seed = 42;
        QVERIFY(scalelab::run_spec_to_json(spec).value("seed").isDouble());
        QCOMPARE(scalelab::run_spec_from_json(to_document(spec)).seed, 42u);
    }

    void absent_keys_keep_the_defaults() {
        RunSpec defaults;
        defaults.epochs = 7;
        const RunSpec spec = scalelab::run_spec_from_json(R"({"lr": 0.1})", defaults);
        QCOMPARE(spec.lr, 0.1);
        QCOMPARE(spec.epochs, 7);
    }

    void invalid_json_reports_line_and_column() {
        const QByteArray document = "{\n  \"model\": \"cnn\",\n  \"epochs\": 3\n  \"lr\": 0.1\n}\n";
        const QString message = error_of(document);
        QVERIFY2(message.contains("line 4"), qPrintable(message));
        QVERIFY2(message.contains("column"), qPrintable(message));
    }

    void a_document_that_is_not_an_object_is_rejected() {
        QVERIFY(error_of("[1, 2]").contains("JSON object"));
    }

    void unknown_key_is_named_with_the_valid_keys() {
        const QString message = error_of(R"({"epochs": 3, "learning_rate": 0.1})");
        QVERIFY2(message.contains("learning_rate"), qPrintable(message));
        QVERIFY2(message.contains("weight_decay"), qPrintable(message));
    }

    void wrong_type_names_the_field_and_what_it_expects() {
        QString message = error_of(R"({"epochs": "3"})");
        QVERIFY2(message.contains("\"epochs\" must be a whole number"), qPrintable(message));
        message = error_of(R"({"batch": 12.5})");
        QVERIFY2(message.contains("\"batch\" must be a whole number"), qPrintable(message));
        message = error_of(R"({"nesterov": 1})");
        QVERIFY2(message.contains("\"nesterov\" must be true or false"), qPrintable(message));
        message = error_of(R"({"lr": "fast"})");
        QVERIFY2(message.contains("\"lr\" must be a number"), qPrintable(message));
        message = error_of(R"({"milestones": [30, "sixty"]})");
        QVERIFY2(message.contains("\"milestones\" must be an array"), qPrintable(message));
        message = error_of(R"({"devices": 1.5})");
        QVERIFY2(message.contains("\"devices\" must be a whole number"), qPrintable(message));
        message = error_of(R"({"sync_bn": "yes"})");
        QVERIFY2(message.contains("\"sync_bn\" must be true or false"), qPrintable(message));
        message = error_of(R"({"seed": -1})");
        QVERIFY2(message.contains("\"seed\""), qPrintable(message));
    }

    void bad_enum_lists_the_choices() {
        QString message = error_of(R"({"schedule": "exponential"})");
        QVERIFY2(message.contains("\"schedule\""), qPrintable(message));
        QVERIFY2(message.contains("\"cosine\""), qPrintable(message));
        message = error_of(R"({"warmup_unit": "minutes"})");
        QVERIFY2(message.contains("\"steps\""), qPrintable(message));
    }

    void every_problem_is_reported_at_once() {
        const QString message = error_of(R"({"epochs": "3", "bogus": 1, "schedule": 5})");
        QCOMPARE(message.count('\n'), 2);
    }
};

QTEST_APPLESS_MAIN(TestRunSpecJson)
#include "test_run_spec_json.moc"
