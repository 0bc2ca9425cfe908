#include "metrics_file_import.h"

#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

#include <algorithm>
#include <map>
#include <optional>

#include "run_exchange.h"

namespace scalelab {

namespace {

[[noreturn]] void fail(const QString& path, int line, const QString& what) {
    throw ExchangeError(
        QStringLiteral("%1, line %2: %3").arg(path).arg(line).arg(what).toStdString());
}

QJsonObject parse_row(const QByteArray& text, const QString& path, int line) {
    QJsonParseError error;
    const QJsonDocument row = QJsonDocument::fromJson(text, &error);
    if (error.error != QJsonParseError::NoError || !row.isObject())
        fail(path, line, QStringLiteral("not a JSON object (%1)").arg(error.errorString()));
    return row.object();
}

double number(const QJsonObject& row, const char* key, const QString& path, int line) {
    const QJsonValue value = row.value(QLatin1String(key));
    if (!value.isDouble())
        fail(path, line, QStringLiteral("\"%1\" must be a number").arg(QLatin1String(key)));
    return value.toDouble();
}

// An empty array for each of the exchange file's curves (all_metrics, by metric_name).
std::map<QString, QJsonArray> empty_curves() {
    std::map<QString, QJsonArray> curves;
    for (const Metric metric : all_metrics)
        curves[QString::fromUtf8(metric_name(metric))];
    return curves;
}

// What the rows add up to, in the exchange file's shape.
struct Curves {
    // By metric name. A QJsonObject holds its arrays by value, so they are appended here, in
    // place, and put in the object once (metrics_object).
    std::map<QString, QJsonArray> rows = empty_curves();
    double seconds = 0;  // the step times so far
    double images_per_s_sum = 0;
    qint64 steps = 0;
    qint64 last_step = 0;
    int epochs = 0;
    std::optional<double> best_val_accuracy;

    void add(const char* metric, double step, double epoch, double value) {
        rows[QLatin1String(metric)].append(QJsonArray{step, epoch, seconds, value});
    }

    QJsonObject metrics_object() const {
        QJsonObject metrics;
        for (const auto& [name, metric_rows] : rows)
            metrics.insert(name, metric_rows);
        return metrics;
    }
};

void add_step(Curves& curves, const QJsonObject& row, const QString& path, int line) {
    const double step = number(row, "step", path, line);
    const double epoch = number(row, "epoch", path, line);
    curves.seconds += number(row, "seconds", path, line);
    curves.add("train_loss", step, epoch, number(row, "loss", path, line));
    curves.add("train_accuracy", step, epoch, number(row, "accuracy", path, line));
    curves.add("lr", step, epoch, number(row, "lr", path, line));
    const double images_per_s = number(row, "images_per_s", path, line);
    curves.add("images_per_s", step, epoch, images_per_s);
    if (row.value(QLatin1String("noise_scale")).isDouble())
        curves.add("noise_scale", step, epoch, row.value(QLatin1String("noise_scale")).toDouble());
    curves.images_per_s_sum += images_per_s;
    curves.last_step = qint64(step);
    ++curves.steps;
}

void add_epoch(Curves& curves, const QJsonObject& row, const QString& path, int line) {
    const double step = number(row, "step", path, line);
    const double epoch = number(row, "epoch", path, line);
    const double accuracy = number(row, "val_accuracy", path, line);
    curves.add("val_loss", step, epoch, number(row, "val_loss", path, line));
    curves.add("val_accuracy", step, epoch, accuracy);
    curves.epochs = int(epoch);
    curves.best_val_accuracy = std::max(curves.best_val_accuracy.value_or(accuracy), accuracy);
}

// The end row's status (RunStatus's name) as a stored state's name.
QString state_of(const QString& status) {
    return status == QLatin1String("reached_target") ? QStringLiteral("reached target") : status;
}

}  // namespace

bool is_metrics_file(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return false;
    const QJsonDocument first = QJsonDocument::fromJson(file.readLine().trimmed());
    return first.isObject() &&
           first.object().value(QLatin1String("type")) == QLatin1String("start");
}

QByteArray exchange_from_metrics_file(const QString& path, const QString& name) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw ExchangeError(
            QStringLiteral("%1: cannot read it (%2)").arg(path, file.errorString()).toStdString());
    QJsonObject start, end;
    Curves curves;
    for (int line = 1; !file.atEnd(); ++line) {
        const QByteArray text = file.readLine().trimmed();
        if (text.isEmpty())
            continue;
        const QJsonObject row = parse_row(text, path, line);
        const QString type = row.value(QLatin1String("type")).toString();
        if (line == 1 && type != QLatin1String("start"))
            fail(path, line, QStringLiteral("a metrics file starts with its \"start\" row"));
        if (type == QLatin1String("start"))
            start = row;
        else if (type == QLatin1String("step"))
            add_step(curves, row, path, line);
        else if (type == QLatin1String("epoch"))
            add_epoch(curves, row, path, line);
        else if (type == QLatin1String("end"))
            end = row;
        else
            fail(path, line, QStringLiteral("\"type\" must be start, step, epoch or end"));
    }
    if (!start.value(QLatin1String("experiment")).isObject())
        fail(path, 1,
             QStringLiteral("the start row has no \"experiment\" (the run's config): "
                            "write the file with this ScaleLab or an exported script"));
    QJsonObject info;
    for (const char* key : {"devices", "threads_per_device", "cores", "global_batch",
                            "steps_per_epoch", "parameters", "warnings"})
        info.insert(QLatin1String(key), start.value(QLatin1String(key)));
    QJsonArray tags;
    if (const QString engine = start.value(QLatin1String("engine")).toString(); !engine.isEmpty())
        tags.append(engine);
    const QJsonObject summary{
        {"steps", curves.last_step},
        {"epochs", curves.epochs},
        {"train_seconds", curves.seconds},
        {"best_val_accuracy", curves.best_val_accuracy ? QJsonValue(*curves.best_val_accuracy)
                                                       : QJsonValue(QJsonValue::Null)},
        {"mean_images_per_s", curves.steps > 0
                                  ? QJsonValue(curves.images_per_s_sum / double(curves.steps))
                                  : QJsonValue(QJsonValue::Null)},
        {"targets", end.value(QLatin1String("targets")).toArray()}};
    const QJsonObject run{
        {"name", name},
        {"tags", tags},
        {"state", end.isEmpty() ? QStringLiteral("interrupted")
                                : state_of(end.value(QLatin1String("status")).toString())},
        {"message", end.value(QLatin1String("message")).toString()},
        {"config", start.value(QLatin1String("experiment"))},
        {"info", info},
        {"machine", start.value(QLatin1String("machine")).toString()},
        {"created", QJsonValue(QJsonValue::Null)},
        {"started", QJsonValue(QJsonValue::Null)},
        {"ended", QJsonValue(QJsonValue::Null)},
        {"summary", summary},
        {"metrics", curves.metrics_object()}};
    return QJsonDocument(QJsonObject{{"format", QLatin1String(exchange_format)},
                                     {"version", exchange_version},
                                     {"runs", QJsonArray{run}}})
        .toJson(QJsonDocument::Compact);
}

}  // namespace scalelab
