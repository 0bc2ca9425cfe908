#include "metrics_export.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonObject>
#include <QLocale>

#include <algorithm>
#include <functional>
#include <optional>

#include "json_number.h"
#include "run_comparison.h"
#include "run_spec_json.h"
#include "store_json.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

QString shortest_number_text(double value) {
    return QString::number(value, 'g', QLocale::FloatingPointShortest);
}

template <typename T, typename ToJson>
QJsonValue optional_json(const std::optional<T>& value, ToJson to_json) {
    return value ? to_json(*value) : QJsonValue(QJsonValue::Null);
}

// The scaling efficiency, or null when it does not apply or has no baseline.
QJsonValue scaling_efficiency_json(const RunCollection& runs, const RunRecord& run) {
    const std::optional<ScalingEfficiency> efficiency = scaling_efficiency(runs, run.id);
    if (!efficiency || !efficiency->value)
        return QJsonValue::Null;
    return json_number(*efficiency->value);
}

QJsonObject summary_json(const RunCollection& runs, const RunRecord& run) {
    const auto plain = [](double value) { return json_number(value); };
    return {{QStringLiteral("best_val_accuracy"), optional_json(run.best_val_accuracy(), plain)},
            {QStringLiteral("time_to_target"),
             optional_json(run.time_to_target(),
                           [](const TargetReached& t) { return QJsonValue(target_to_json(t)); })},
            {QStringLiteral("mean_images_per_s"), optional_json(run.mean_images_per_s(), plain)},
            {QStringLiteral("scaling_efficiency"), scaling_efficiency_json(runs, run)}};
}

QJsonObject metrics_json(const RunRecord& run) {
    QJsonObject metrics;
    for (Metric metric : all_metrics) {
        QJsonArray points;
        for (const MetricPoint& point : run.curve(metric))
            points.append(QJsonArray{double(point.step), point.epoch, point.seconds,
                                     json_number(point.value)});
        metrics.insert(QString::fromUtf8(metric_name(metric)), points);
    }
    return metrics;
}

QJsonValue date_json(const QDateTime& time) {
    return time.isValid() ? QJsonValue(time.toString(Qt::ISODateWithMs))
                          : QJsonValue(QJsonValue::Null);
}

QJsonObject run_json(const RunCollection& runs, const RunRecord& run) {
    return {{QStringLiteral("id"), run.id},
            {QStringLiteral("name"), run.name},
            {QStringLiteral("group"), run.group},
            {QStringLiteral("state"), QString::fromUtf8(to_string(run.state))},
            {QStringLiteral("message"), run.message},
            {QStringLiteral("created"), date_json(run.created)},
            {QStringLiteral("ended"), date_json(run.ended)},
            {QStringLiteral("config"), run_spec_to_json(run.spec)},
            {QStringLiteral("info"),
             run.started ? QJsonValue(run_info_to_json(run.info)) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("summary"), summary_json(runs, run)},
            {QStringLiteral("metrics"), metrics_json(run)}};
}

}  // namespace

QString csv_field(const QString& text) {
    static const QString special = QStringLiteral(",\"\r\n");
    if (std::none_of(text.begin(), text.end(), [](QChar c) { return special.contains(c); }))
        return text;
    QString quoted = text;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QLatin1Char('"') + quoted + QLatin1Char('"');
}

void write_metrics_csv_row(QTextStream& out, const QString& run_field, std::int64_t run_id,
                           const QString& metric, std::int64_t step, int epoch, double seconds,
                           double value, const QString& group_field) {
    out << run_field << ',' << run_id << ',' << group_field << ',' << step << ',' << epoch << ','
        << shortest_number_text(seconds) << ',' << metric << ',' << shortest_number_text(value)
        << '\n';
}

bool save_text_file(const QString& path, QString* error,
                    const std::function<void(QTextStream&)>& write) {
    const QString reason = write_whole_file(path, [&](QIODevice& device) {
        QTextStream out(&device);
        write(out);
        out.flush();
        return out.status() == QTextStream::Ok;
    });
    if (!reason.isEmpty() && error != nullptr)
        *error = cannot_write_message(path, reason);
    return reason.isEmpty();
}

void write_metrics_csv(const RunCollection& runs, const std::vector<int>& ids, QTextStream& out) {
    std::vector<const RunRecord*> records;
    for (int id : ids)
        if (const RunRecord* run = runs.find(id))
            records.push_back(run);
    write_metrics_csv(records, out);
}

void write_metrics_csv(const std::vector<const RunRecord*>& runs, QTextStream& out) {
    out << metrics_csv_header << '\n';
    for (const RunRecord* run : runs) {
        const QString name = csv_field(run->name);
        const QString group = csv_field(run->group);
        for (Metric metric : all_metrics) {
            const QString metric_text = QString::fromUtf8(metric_name(metric));
            for (const MetricPoint& point : run->curve(metric))
                write_metrics_csv_row(out, name, run->id, metric_text, point.step, point.epoch,
                                      point.seconds, point.value, group);
        }
    }
}

QJsonDocument runs_to_json(const RunCollection& runs, const std::vector<int>& ids) {
    QJsonArray array;
    for (int id : ids)
        if (const RunRecord* run = runs.find(id))
            array.append(run_json(runs, *run));
    return QJsonDocument(QJsonObject{{QStringLiteral("runs"), array}});
}

bool save_metrics_csv(const RunCollection& runs, const std::vector<int>& ids, const QString& path,
                      QString* error) {
    return save_text_file(path, error,
                          [&](QTextStream& out) { write_metrics_csv(runs, ids, out); });
}

bool save_runs_json(const RunCollection& runs, const std::vector<int>& ids, const QString& path,
                    QString* error) {
    return save_text_file(path, error, [&](QTextStream& out) {
        out << runs_to_json(runs, ids).toJson(QJsonDocument::Indented);
    });
}

}  // namespace scalelab
