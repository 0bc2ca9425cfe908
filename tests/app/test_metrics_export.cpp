#include <QJsonArray>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include "metrics_export.h"
#include "run_collection.h"
#include "run_controller.h"
#include "run_fixtures.h"
#include "run_spec_json.h"

using scalelab::Metric;
using scalelab::MetricPoint;
using scalelab::RunCollection;
using scalelab::RunController;
using scalelab::RunRecord;
using scalelab::RunSpec;
using scalelab::testing::fixture_run;
using scalelab::testing::fixture_spec;

namespace {

// One CSV record split into fields (RFC 4180 quoting, no line breaks inside fields).
QStringList csv_fields(const QString& line) {
    QStringList fields;
    QString field;
    bool quoted = false;
    for (qsizetype i = 0; i < line.size(); ++i) {
        const QChar c = line[i];
        if (quoted && c == QLatin1Char('"') && i + 1 < line.size() &&
            line[i + 1] == QLatin1Char('"')) {
            field += c;
            ++i;
        } else if (c == QLatin1Char('"')) {
            quoted = !quoted;
        } else if (c == QLatin1Char(',') && !quoted) {
            fields.append(field);
            field.clear();
        } else {
            field += c;
        }
    }
    fields.append(field);
    return fields;
}

std::size_t point_count(const RunRecord& run) {
    std::size_t count = 0;
    for (Metric metric : scalelab::all_metrics)
        count += run.curve(metric).size();
    return count;
}

}  // namespace

class TestMetricsExport : public QObject {
    Q_OBJECT

  private slots:
    void init() {
        runs_ = std::make_unique<RunCollection>(controller_);
        RunSpec spec = fixture_spec(2);
        spec.schedule = scalelab::ScheduleKind::Cosine;
        spec.seed = 42;
        plain_ = runs_->add(fixture_run(spec, "plain", 2560, {0.80, 0.88, 0.91}));
        // One of the two has a diverged (infinite) last loss.
        RunRecord awkward = fixture_run(fixture_spec(1), "big, \"fast\" run", 1234.5, {0.7, 0.86});
        awkward.curve(Metric::TrainLoss).back().value = std::numeric_limits<double>::infinity();
        // One of a group of repeats, whose id (a UUID in the store) must be quoted here.
        awkward.group = QStringLiteral("repeats, 1");
        awkward_ = runs_->add(std::move(awkward));
        left_out_ = runs_->add(fixture_run(fixture_spec(4), "not exported", 4000, {0.8}));
    }

    void cleanup() { runs_.reset(); }

    void csv_has_one_row_per_point_of_the_listed_runs() {
        QString text;
        QTextStream out(&text);
        scalelab::write_metrics_csv(*runs_, {plain_, awkward_, 999}, out);
        out.flush();

        QStringList lines = text.split(QLatin1Char('\n'));
        QCOMPARE(lines.takeLast(), QString());  // the last row ends with a line break
        QCOMPARE(lines.takeFirst(),
                 QStringLiteral("run,run_id,group,step,epoch,wall_time_s,metric,value"));
        const std::size_t expected =
            point_count(*runs_->find(plain_)) + point_count(*runs_->find(awkward_));
        QCOMPARE(std::size_t(lines.size()), expected);

        std::size_t awkward_rows = 0;
        for (const QString& line : lines) {
            const QStringList fields = csv_fields(line);
            QCOMPARE(fields.size(), 8);
            QVERIFY(fields[1].toInt() != left_out_);
            if (fields[1].toInt() == awkward_) {
                ++awkward_rows;
                QCOMPARE(fields[0], QStringLiteral("big, \"fast\" run"));
                QCOMPARE(fields[2], QStringLiteral("repeats, 1"));
                QVERIFY(line.startsWith(QStringLiteral("\"big, \"\"fast\"\" run\",")));
            } else {
                QCOMPARE(fields[0], QStringLiteral("plain"));
                QCOMPARE(fields[2], QString());
            }
        }
        QCOMPARE(awkward_rows, point_count(*runs_->find(awkward_)));

        // Numbers read back exactly: the plain run's 7th training-accuracy point.
        const RunRecord& plain = *runs_->find(plain_);
        const MetricPoint& point = plain.curve(Metric::TrainAccuracy)[6];
        const auto row = std::find_if(lines.begin(), lines.end(), [&](const QString& line) {
            const QStringList f = csv_fields(line);
            return f[1].toInt() == plain_ && f[6] == QStringLiteral("train_accuracy") &&
                   f[3].toLongLong() == point.step;
        });
        QVERIFY(row != lines.end());
        const QStringList fields = csv_fields(*row);
        QCOMPARE(fields[4].toInt(), point.epoch);
        QCOMPARE(fields[5].toDouble(), point.seconds);
        QVERIFY(fields[7].toDouble() == point.value);
    }

    void json_keeps_configs_summaries_and_every_point() {
        const QJsonDocument document = scalelab::runs_to_json(*runs_, {awkward_, plain_});
        const QJsonArray array = document.object().value(QStringLiteral("runs")).toArray();
        QCOMPARE(array.size(), 2);
        QCOMPARE(array[0].toObject().value(QStringLiteral("id")).toInt(), awkward_);
        QCOMPARE(array[0].toObject().value(QStringLiteral("group")).toString(),
                 QStringLiteral("repeats, 1"));

        const QJsonObject plain_json = array[1].toObject();
        const RunRecord& plain = *runs_->find(plain_);
        QCOMPARE(plain_json.value(QStringLiteral("name")).toString(), QStringLiteral("plain"));
        QCOMPARE(plain_json.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));

        // The config loads back as the same spec.
        const QByteArray config =
            QJsonDocument(plain_json.value(QStringLiteral("config")).toObject()).toJson();
        const RunSpec loaded = scalelab::run_spec_from_json(config);
        QCOMPARE(scalelab::run_spec_to_json(loaded), scalelab::run_spec_to_json(plain.spec));
        QCOMPARE(loaded.seed, std::uint64_t(42));

        const QJsonObject info = plain_json.value(QStringLiteral("info")).toObject();
        QCOMPARE(info.value(QStringLiteral("global_batch")).toInt(), 256);
        QCOMPARE(info.value(QStringLiteral("steps_per_epoch")).toInt(), 10);
        const QJsonObject summary = plain_json.value(QStringLiteral("summary")).toObject();
        QCOMPARE(summary.value(QStringLiteral("best_val_accuracy")).toDouble(), 0.91);
        QCOMPARE(summary.value(QStringLiteral("mean_images_per_s")).toDouble(), 2560.0);
        QCOMPARE(summary.value(QStringLiteral("time_to_target"))
                     .toObject()
                     .value(QStringLiteral("epoch"))
                     .toInt(),
                 3);
        QVERIFY(summary.value(QStringLiteral("scaling_efficiency")).isNull());

        const QJsonObject metrics = plain_json.value(QStringLiteral("metrics")).toObject();
        for (Metric metric : scalelab::all_metrics)
            QCOMPARE(std::size_t(metrics.value(QString::fromUtf8(scalelab::metric_name(metric)))
                                     .toArray()
                                     .size()),
                     plain.curve(metric).size());
        const QJsonArray val = metrics.value(QStringLiteral("val_accuracy")).toArray();
        const MetricPoint& last = plain.curve(Metric::ValAccuracy).back();
        QCOMPARE(val.last().toArray(),
                 (QJsonArray{double(last.step), last.epoch, last.seconds, last.value}));

        // JSON has no infinity: the diverged loss is null, not a broken document.
        const QJsonArray losses = array[0]
                                      .toObject()
                                      .value(QStringLiteral("metrics"))
                                      .toObject()
                                      .value(QStringLiteral("train_loss"))
                                      .toArray();
        QVERIFY(losses.last().toArray()[3].isNull());
        QVERIFY(!QJsonDocument::fromJson(document.toJson()).isNull());
    }

    void a_run_that_never_started_has_no_info() {
        RunRecord queued;
        queued.spec = fixture_spec(1);
        const int id = runs_->add(queued);
        const QJsonObject run =
            scalelab::runs_to_json(*runs_, {id}).object()[QStringLiteral("runs")][0].toObject();
        QVERIFY(run.value(QStringLiteral("info")).isNull());
        QVERIFY(run.value(QStringLiteral("summary"))[QStringLiteral("best_val_accuracy")].isNull());
    }

    void saves_to_files() {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        QString error;
        const QString csv = dir.filePath(QStringLiteral("metrics.csv"));
        QVERIFY2(scalelab::save_metrics_csv(*runs_, {plain_}, csv, &error), qPrintable(error));
        QFile csv_file(csv);
        QVERIFY(csv_file.open(QIODevice::ReadOnly));
        QCOMPARE(std::size_t(csv_file.readAll().count('\n')),
                 1 + point_count(*runs_->find(plain_)));

        const QString json = dir.filePath(QStringLiteral("runs.json"));
        QVERIFY2(scalelab::save_runs_json(*runs_, {plain_, awkward_}, json, &error),
                 qPrintable(error));
        QFile json_file(json);
        QVERIFY(json_file.open(QIODevice::ReadOnly));
        QCOMPARE(QJsonDocument::fromJson(json_file.readAll())
                     .object()
                     .value(QStringLiteral("runs"))
                     .toArray()
                     .size(),
                 2);
    }

    void an_unwritable_path_fails_with_a_message_naming_it() {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("no such folder/metrics.csv"));
        QString error;
        QVERIFY(!scalelab::save_metrics_csv(*runs_, {plain_}, path, &error));
        QVERIFY2(error.contains(path), qPrintable(error));
        QVERIFY(!QFile::exists(path));

        error.clear();
        QVERIFY(!scalelab::save_runs_json(*runs_, {plain_}, dir.path(), &error));
        QVERIFY2(error.contains(dir.path()), qPrintable(error));
    }

  private:
    RunController controller_;
    std::unique_ptr<RunCollection> runs_;
    int plain_ = 0;
    int awkward_ = 0;
    int left_out_ = 0;
};

QTEST_MAIN(TestMetricsExport)
#include "test_metrics_export.moc"
