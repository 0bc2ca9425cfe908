#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QtTest>

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

}  // namespace

class TestMetricsJsonlSink : public QObject {
    Q_OBJECT

  private slots:
    void writes_one_row_per_event_with_the_documented_keys() {
        QTemporaryDir dir;
        const QString path = dir.filePath("m.jsonl");
        {
            MetricsJsonlSink sink(path.toStdString());
            sink.on_step({1, 1, 1, 2, 2.3, 0.1, 0.05, 1000});
            sink.on_step({2, 1, 2, 2, 2.1, 0.2, 0.04, 1100});
            sink.on_epoch({1, 2, 2.2, 0.15, 2.0, 0.3, 1.5, 1050});
            sink.on_end({scalelab::RunStatus::ReachedTarget, "reached \"0.3\"", 2, 1});
        }
        const QList<QJsonObject> rows = read_rows(path);
        QCOMPARE(rows.size(), 4);

        const QJsonObject step = rows[1];
        QCOMPARE(step["type"].toString(), QString("step"));
        for (const char* key : {"step", "epoch", "loss", "accuracy", "lr", "images_per_s"})
            QVERIFY2(step.contains(key), key);
        QCOMPARE(step["step"].toInt(), 2);
        QCOMPARE(step["loss"].toDouble(), 2.1);

        const QJsonObject epoch = rows[2];
        QCOMPARE(epoch["type"].toString(), QString("epoch"));
        for (const char* key : {"step", "epoch", "loss", "lr", "images_per_s", "train_loss",
                                "train_accuracy", "val_loss", "val_accuracy", "epoch_seconds"})
            QVERIFY2(epoch.contains(key), key);
        QCOMPARE(epoch["loss"].toDouble(), 2.2);
        QCOMPARE(epoch["lr"].toDouble(), 0.04);  // the epoch's last step
        QCOMPARE(epoch["val_accuracy"].toDouble(), 0.3);

        const QJsonObject end = rows[3];
        QCOMPARE(end["type"].toString(), QString("end"));
        QCOMPARE(end["status"].toString(), QString("reached_target"));
        QCOMPARE(end["message"].toString(), QString("reached \"0.3\""));
        QCOMPARE(end["step"].toInt(), 2);
        QCOMPARE(end["epoch"].toInt(), 1);
    }

    void a_non_finite_loss_is_written_as_null() {
        QTemporaryDir dir;
        const QString path = dir.filePath("m.jsonl");
        {
            MetricsJsonlSink sink(path.toStdString());
            sink.on_step({1, 1, 1, 1, std::numeric_limits<double>::quiet_NaN(), 0, 0.1, 10});
        }
        const QList<QJsonObject> rows = read_rows(path);
        QCOMPARE(rows.size(), 1);
        QVERIFY(rows[0]["loss"].isNull());
    }

    void an_unwritable_path_throws_with_the_path() {
        try {
            MetricsJsonlSink sink("/nonexistent/dir/m.jsonl");
            QFAIL("no exception");
        } catch (const std::runtime_error& error) {
            QVERIFY(QString(error.what()).contains("/nonexistent/dir/m.jsonl"));
        }
    }
};

QTEST_APPLESS_MAIN(TestMetricsJsonlSink)
#include "test_metrics_jsonl_sink.moc"
