#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

#include <cstdint>
#include <limits>
#include <stdexcept>

#include "cli/metrics_jsonl_sink.h"

using scalelab::cli::MetricsJsonlSink;

namespace {

QList<QJsonObject> read_rows(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return {};
    QList<QJsonObject> rows;
    for (const QByteArray& line : file.readAll().split('\n')) {
        if (line.isEmpty())
            continue;
        QJsonParseError error;
        rows.append(QJsonDocument::fromJson(line, &error).object());
        if (error.error != QJsonParseError::NoError)
            return {};
    }
    return rows;
}

scalelab::StepMetrics step_metrics(std::int64_t step, double loss, double lr, double images_per_s) {
    scalelab::StepMetrics m;
    m.step = step;
    m.epoch = 1;
    m.step_in_epoch = int(step);
    m.steps_per_epoch = 2;
    m.loss = loss;
    m.accuracy = 0.1 * double(step);
    m.lr = lr;
    m.images_per_s = images_per_s;
    m.seconds = 0.25;
    return m;
}

}  // namespace

class TestMetricsJsonlSink : public QObject {
    Q_OBJECT

  private slots:
    void writes_one_row_per_event_with_the_documented_keys() {
        QTemporaryDir dir;
        const QString path = dir.filePath("m.jsonl");
        {
            MetricsJsonlSink sink(path.toStdString(), R"({"model":"cnn","devices":2})");
            scalelab::RunInfo info;
            info.devices = 2;
            info.threads_per_device = 1;
            info.cores = 2;
            info.global_batch = 256;
            info.steps_per_epoch = 2;
            info.parameters = 5'000'000'000;  // more than an int holds
            info.warnings = {"more devices than cores: \"throughput\" cannot scale"};
            sink.on_start(info);
            sink.on_step(step_metrics(1, 2.3, 0.05, 1000));
            scalelab::StepMetrics second = step_metrics(2, 2.1, 0.04, 1100);
            second.devices.resize(2);
            second.devices[1] = {0.001, 0.01, 0.02, 0.003, 0.004, 0.005, {}};
            second.noise_scale = 1234.5;
            sink.on_step(second);
            scalelab::EpochMetrics epoch_metrics;
            epoch_metrics.epoch = 1;
            epoch_metrics.step = 2;
            epoch_metrics.train_loss = 2.2;
            epoch_metrics.train_accuracy = 0.15;
            epoch_metrics.val_loss = 2.0;
            epoch_metrics.val_accuracy = 0.3;
            epoch_metrics.epoch_seconds = 1.5;
            epoch_metrics.images_per_s = 1050;
            epoch_metrics.steady_images_per_s = 1080;
            epoch_metrics.other_programs_share = 0.25;
            epoch_metrics.reached = {{0.25, 1.5, 2, 1, 256}};
            sink.on_epoch(epoch_metrics);
            sink.on_end({scalelab::RunStatus::ReachedTarget,
                         "reached \"0.3\"",
                         2,
                         1,
                         {{0.25, 1.5, 2, 1, 256}}});
        }
        const QList<QJsonObject> rows = read_rows(path);
        QCOMPARE(rows.size(), 5);

        const QJsonObject start = rows[0];
        QCOMPARE(start["type"].toString(), QString("start"));
        QCOMPARE(start["devices"].toInt(), 2);
        QCOMPARE(start["threads_per_device"].toInt(), 1);
        QCOMPARE(start["cores"].toInt(), 2);
        QCOMPARE(start["global_batch"].toInt(), 256);
        QCOMPARE(start["steps_per_epoch"].toInt(), 2);
        QCOMPARE(start["parameters"].toInteger(), 5'000'000'000LL);
        QCOMPARE(start["warnings"].toArray().size(), 1);
        QCOMPARE(start["experiment"].toObject()["model"].toString(), QString("cnn"));
        QCOMPARE(start["warnings"].toArray()[0].toString(),
                 QString("more devices than cores: \"throughput\" cannot scale"));

        QCOMPARE(rows[1]["devices"].toArray().size(), 0);  // no breakdown reported
        QVERIFY(rows[1].contains("noise_scale"));
        QVERIFY(rows[1]["noise_scale"].isNull());  // NaN: not known yet
        const QJsonObject step = rows[2];
        QCOMPARE(step["type"].toString(), QString("step"));
        for (const char* key : {"step", "epoch", "loss", "accuracy", "lr", "images_per_s",
                                "seconds", "noise_scale", "devices"})
            QVERIFY2(step.contains(key), key);
        QCOMPARE(step["step"].toInt(), 2);
        QCOMPARE(step["noise_scale"].toDouble(), 1234.5);
        QCOMPARE(step["loss"].toDouble(), 2.1);
        QCOMPARE(step["seconds"].toDouble(), 0.25);
        const QJsonArray devices = step["devices"].toArray();
        QCOMPARE(devices.size(), 2);
        for (int rank = 0; rank < 2; ++rank) {
            const QJsonObject device = devices[rank].toObject();
            QCOMPARE(device["rank"].toInt(), rank);
            for (const char* key :
                 {"data", "forward", "backward", "exposed_comm", "wait", "optimizer"})
                QVERIFY2(device.contains(key), key);
        }
        const QJsonObject rank1 = devices[1].toObject();
        QCOMPARE(rank1["data"].toDouble(), 0.001);
        QCOMPARE(rank1["forward"].toDouble(), 0.01);
        QCOMPARE(rank1["backward"].toDouble(), 0.02);
        QCOMPARE(rank1["exposed_comm"].toDouble(), 0.003);
        QCOMPARE(rank1["wait"].toDouble(), 0.004);
        QCOMPARE(rank1["optimizer"].toDouble(), 0.005);

        const QJsonObject epoch = rows[3];
        QCOMPARE(epoch["type"].toString(), QString("epoch"));
        for (const char* key :
             {"step", "epoch", "loss", "lr", "images_per_s", "train_loss", "train_accuracy",
              "val_loss", "val_accuracy", "epoch_seconds", "steady_images_per_s", "reached"})
            QVERIFY2(epoch.contains(key), key);
        const auto check_reached = [](const QJsonValue& value) {
            const QJsonArray array = value.toArray();
            QCOMPARE(array.size(), 1);
            const QJsonObject reached = array[0].toObject();
            QCOMPARE(reached["target"].toDouble(), 0.25);
            QCOMPARE(reached["seconds"].toDouble(), 1.5);
            QCOMPARE(reached["step"].toInt(), 2);
            QCOMPARE(reached["epoch"].toInt(), 1);
            QCOMPARE(reached["images"].toDouble(), 256.0);
        };
        check_reached(epoch["reached"]);
        QCOMPARE(epoch["loss"].toDouble(), 2.2);
        QCOMPARE(epoch["lr"].toDouble(), 0.04);  // the epoch's last step
        QCOMPARE(epoch["val_accuracy"].toDouble(), 0.3);
        QCOMPARE(epoch["steady_images_per_s"].toDouble(), 1080.0);
        QCOMPARE(epoch["other_programs_share"].toDouble(), 0.25);

        const QJsonObject end = rows[4];
        QCOMPARE(end["type"].toString(), QString("end"));
        QCOMPARE(end["status"].toString(), QString("reached_target"));
        QCOMPARE(end["message"].toString(), QString("reached \"0.3\""));
        QCOMPARE(end["step"].toInt(), 2);
        QCOMPARE(end["epoch"].toInt(), 1);
        check_reached(end["targets"]);
    }

    void a_non_finite_loss_is_written_as_null() {
        QTemporaryDir dir;
        const QString path = dir.filePath("m.jsonl");
        {
            MetricsJsonlSink sink(path.toStdString(), "{}");
            sink.on_step(step_metrics(1, std::numeric_limits<double>::quiet_NaN(), 0.1, 10));
        }
        const QList<QJsonObject> rows = read_rows(path);
        QCOMPARE(rows.size(), 1);
        QVERIFY(rows[0]["loss"].isNull());
    }

    // A folder inside a regular file cannot be made, not even by root.
    void an_unwritable_path_throws_with_the_path() {
        try {
            MetricsJsonlSink sink("/etc/passwd/dir/m.jsonl", "{}");
            QFAIL("no exception");
        } catch (const std::runtime_error& error) {
            QVERIFY(QString(error.what()).contains("/etc/passwd/dir/m.jsonl"));
        }
    }
};

QTEST_APPLESS_MAIN(TestMetricsJsonlSink)
#include "test_metrics_jsonl_sink.moc"
