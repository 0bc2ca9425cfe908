#include "run_exchange.h"

#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QLocale>

#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "error.h"
#include "json_error_position.h"
#include "json_number.h"
#include "metrics_export.h"
#include "run_spec_json.h"
#include "store_json.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

// JSON numbers are doubles: whole numbers are exact up to 2^53.
constexpr double largest_whole = 9007199254740992.0;
constexpr double largest_int = std::numeric_limits<int>::max();

// ---------------------------------------------------------------------------------------------
// Writing

QJsonValue json_date(const QDateTime& time) {
    return time.isValid() ? QJsonValue(time.toUTC().toString(Qt::ISODateWithMs))
                          : QJsonValue(QJsonValue::Null);
}

QJsonObject summary_json(const StoredRun& run) {
    return {{QStringLiteral("steps"), double(run.steps)},
            {QStringLiteral("epochs"), run.epochs},
            {QStringLiteral("train_seconds"), run.train_seconds},
            {QStringLiteral("best_val_accuracy"), json_number(run.best_val_accuracy)},
            {QStringLiteral("mean_images_per_s"), json_number(run.mean_images_per_s)},
            {QStringLiteral("other_programs_share"), json_number(run.other_programs_share)},
            {QStringLiteral("targets"), targets_to_json(run.targets)}};
}

QJsonObject run_json(const StoredRun& run) {
    return {{QStringLiteral("name"), run.name},
            {QStringLiteral("tags"), tags_to_json(run.tags)},
            {QStringLiteral("state"), QString::fromUtf8(to_string(run.state))},
            {QStringLiteral("message"), run.message},
            {QStringLiteral("config"), run_spec_to_json(run.spec)},
            {QStringLiteral("info"),
             run.started ? QJsonValue(run_info_to_json(run.info)) : QJsonValue(QJsonValue::Null)},
            {QStringLiteral("machine"), run.machine},
            {QStringLiteral("created"), json_date(run.created)},
            {QStringLiteral("started"), json_date(run.started_at)},
            {QStringLiteral("ended"), json_date(run.ended_at)},
            {QStringLiteral("summary"), summary_json(run)}};
}

// `text` with every line but the first indented by `spaces` more.
QByteArray indented(QByteArray text, int spaces) {
    return text.replace('\n', '\n' + QByteArray(spaces, ' '));
}

// One run as QJsonDocument::Indented would write it, but with each metric row on a line of its
// own: a long run has hundreds of thousands of rows, which Indented spreads over six lines each.
QByteArray run_text(const StoredRun& run, const std::vector<MetricRow>& rows) {
    std::array<QByteArray, metric_count> curves;
    for (const MetricRow& row : rows) {
        QByteArray& curve = curves[static_cast<int>(row.metric)];
        curve += (curve.isEmpty() ? "\n    " : ",\n    ") +
                 QJsonDocument(QJsonArray{double(row.step), row.epoch, json_number(row.wall_time),
                                          json_number(row.value)})
                     .toJson(QJsonDocument::Compact);
    }
    QByteArray metrics;
    for (Metric metric : all_metrics) {
        const QByteArray& curve = curves[static_cast<int>(metric)];
        if (curve.isEmpty())
            continue;
        const std::string_view name = metric_name(metric);
        metrics += (metrics.isEmpty() ? "\n" : ",\n") + QByteArray("\"") +
                   QByteArray(name.data(), qsizetype(name.size())) + "\": [" + curve + "\n]";
    }
    QByteArray text = QJsonDocument(run_json(run)).toJson(QJsonDocument::Indented);
    text.chop(3);  // "\n}\n": the metrics come last
    return text + ",\n    \"metrics\": {" + indented(metrics, 8) +
           (metrics.isEmpty() ? "}" : "\n    }") + "\n}";
}

// ---------------------------------------------------------------------------------------------
// Reading

[[noreturn]] void fail(const QString& where, const QString& problem) {
    throw ExchangeError((where + QStringLiteral(": ") + problem).toStdString());
}

// How a problem names the value it found.
QString describe(const QJsonValue& value) {
    switch (value.type()) {
        case QJsonValue::Null:
            return QStringLiteral("null");
        case QJsonValue::Bool:
            return value.toBool() ? QStringLiteral("true") : QStringLiteral("false");
        case QJsonValue::Double:
            return QString::number(value.toDouble(), 'g', QLocale::FloatingPointShortest);
        case QJsonValue::String:
            return QStringLiteral("the string \"%1\"").arg(value.toString());
        case QJsonValue::Array:
            return QStringLiteral("an array");
        case QJsonValue::Object:
            return QStringLiteral("an object");
        case QJsonValue::Undefined:
            break;
    }
    return QStringLiteral("nothing");
}

bool is_whole(const QJsonValue& value, double low, double high) {
    if (!value.isDouble())
        return false;
    const double v = value.toDouble();
    return std::floor(v) == v && v >= low && v <= high;
}

// The members of one JSON object of the file, read with the place of each in the messages:
// `run 2 ("cnn"), summary.steps`. Keys the object may not have are refused when it is made.
class Fields {
  public:
    Fields(QJsonObject object, QString run, QString path, const QStringList& keys)
        : object_(std::move(object)), run_(std::move(run)), path_(std::move(path)) {
        for (auto it = object_.begin(); it != object_.end(); ++it)
            if (!keys.contains(it.key()))
                fail(where(it.key()), QStringLiteral("unknown field; the fields are ") +
                                          keys.join(QStringLiteral(", ")));
    }

    QString where(const QString& key) const {
        const QString field = path_.isEmpty() ? key : path_ + QLatin1Char('.') + key;
        return run_.isEmpty() ? field : run_ + QStringLiteral(", ") + field;
    }

    QJsonValue required(const QString& key) const {
        if (!object_.contains(key))
            fail(where(key), QStringLiteral("missing: add it, or export the runs again"));
        return object_.value(key);
    }
    // Absent or null: nothing.
    std::optional<QJsonValue> optional(const QString& key) const {
        const QJsonValue value = object_.value(key);
        if (value.isUndefined() || value.isNull())
            return std::nullopt;
        return value;
    }

    QString string(const QString& key, bool must_have = false) const {
        const QJsonValue value = must_have ? required(key) : object_.value(key);
        if (value.isUndefined())
            return {};
        if (!value.isString())
            fail(where(key), QStringLiteral("must be a string, got ") + describe(value));
        return value.toString();
    }
    double whole(const QString& key, double low, double high) const {
        const QJsonValue value = required(key);
        if (!is_whole(value, low, high))
            fail(where(key), QStringLiteral("must be a whole number of at least %1, got %2")
                                 .arg(low)
                                 .arg(describe(value)));
        return value.toDouble();
    }
    double number(const QString& key) const {
        const QJsonValue value = required(key);
        if (!value.isDouble())
            fail(where(key), QStringLiteral("must be a number, got ") + describe(value));
        return value.toDouble();
    }
    std::optional<double> number_or_null(const QString& key) const {
        const auto value = optional(key);
        if (!value)
            return std::nullopt;
        if (!value->isDouble())
            fail(where(key), QStringLiteral("must be a number or null, got ") + describe(*value));
        return value->toDouble();
    }
    QJsonArray array(const QString& key) const {
        const auto value = optional(key);
        if (!value)
            return {};
        if (!value->isArray())
            fail(where(key), QStringLiteral("must be an array, got ") + describe(*value));
        return value->toArray();
    }
    QStringList strings(const QString& key) const {
        QStringList out;
        const QJsonArray items = array(key);
        for (qsizetype i = 0; i < items.size(); ++i) {
            if (!items[i].isString())
                fail(where(key), QStringLiteral("item %1 must be a string, got %2")
                                     .arg(i + 1)
                                     .arg(describe(items[i])));
            out.append(items[i].toString());
        }
        return out;
    }
    // A nested object, absent or null as nothing.
    std::optional<Fields> object(const QString& key, const QStringList& keys) const {
        const auto value = optional(key);
        if (!value)
            return std::nullopt;
        if (!value->isObject())
            fail(where(key), QStringLiteral("must be an object, got ") + describe(*value));
        return Fields(value->toObject(), run_, path_.isEmpty() ? key : path_ + '.' + key, keys);
    }
    // Item `index` (from 0) of the array `key`, an object.
    Fields item(const QString& key, qsizetype index, const QStringList& keys) const {
        const QJsonValue value = array(key).at(index);
        const QString path =
            (path_.isEmpty() ? key : path_ + '.' + key) + QStringLiteral(" item %1").arg(index + 1);
        if (!value.isObject())
            fail(run_ + QStringLiteral(", ") + path,
                 QStringLiteral("must be an object, got ") + describe(value));
        return Fields(value.toObject(), run_, path, keys);
    }
    QDateTime date(const QString& key) const {
        const auto value = optional(key);
        if (!value)
            return {};
        const QDateTime time = value->isString()
                                   ? QDateTime::fromString(value->toString(), Qt::ISODateWithMs)
                                   : QDateTime();
        if (!time.isValid())
            fail(where(key),
                 QStringLiteral("must be an ISO 8601 date and time like 2026-11-30T11:07:03Z or "
                                "null, got ") +
                     describe(*value));
        return time;
    }

  private:
    QJsonObject object_;
    QString run_;
    QString path_;
};

const QStringList run_keys{"name",    "tags",    "state",   "message", "config",  "info",
                           "machine", "created", "started", "ended",   "summary", "metrics"};
const QStringList info_keys{"devices",         "threads_per_device", "cores",   "global_batch",
                            "steps_per_epoch", "parameters",         "warnings"};
const QStringList summary_keys{"steps",
                               "epochs",
                               "train_seconds",
                               "best_val_accuracy",
                               "mean_images_per_s",
                               "targets",
                               "other_programs_share"};
const QStringList target_keys{"target", "seconds", "step", "epoch", "images"};

std::optional<Metric> metric_named(const QString& name) {
    for (Metric metric : all_metrics)
        if (name == QString::fromUtf8(metric_name(metric)))
            return metric;
    return std::nullopt;
}

QString metric_name_list() {
    QStringList names;
    for (Metric metric : all_metrics)
        names.append(QString::fromUtf8(metric_name(metric)));
    return names.join(QStringLiteral(", "));
}

RunInfo read_info(const Fields& info) {
    RunInfo out;
    out.devices = int(info.whole(QStringLiteral("devices"), 1, largest_int));
    out.threads_per_device = int(info.whole(QStringLiteral("threads_per_device"), 0, largest_int));
    out.cores = int(info.whole(QStringLiteral("cores"), 0, largest_int));
    out.global_batch = int(info.whole(QStringLiteral("global_batch"), 0, largest_int));
    out.steps_per_epoch = int(info.whole(QStringLiteral("steps_per_epoch"), 0, largest_int));
    out.parameters = std::size_t(info.whole(QStringLiteral("parameters"), 0, largest_whole));
    for (const QString& warning : info.strings(QStringLiteral("warnings")))
        out.warnings.push_back(warning.toStdString());
    return out;
}

TargetReached read_target(const Fields& target) {
    TargetReached out;
    out.target = target.number(QStringLiteral("target"));
    out.seconds = target.number(QStringLiteral("seconds"));
    out.step = std::int64_t(target.whole(QStringLiteral("step"), 0, largest_whole));
    out.epoch = int(target.whole(QStringLiteral("epoch"), 0, largest_int));
    out.images = target.number(QStringLiteral("images"));
    return out;
}

void read_summary(const Fields& summary, StoredRun& run) {
    run.steps = std::int64_t(summary.whole(QStringLiteral("steps"), 0, largest_whole));
    run.epochs = int(summary.whole(QStringLiteral("epochs"), 0, largest_int));
    run.train_seconds = summary.number(QStringLiteral("train_seconds"));
    run.best_val_accuracy = summary.number_or_null(QStringLiteral("best_val_accuracy"));
    run.mean_images_per_s = summary.number_or_null(QStringLiteral("mean_images_per_s"));
    run.other_programs_share = summary.number_or_null(QStringLiteral("other_programs_share"));
    const qsizetype targets = summary.array(QStringLiteral("targets")).size();
    for (qsizetype i = 0; i < targets; ++i)
        run.targets.push_back(read_target(summary.item(QStringLiteral("targets"), i, target_keys)));
}

// One curve: rows of [step, epoch, wall_time_s, value], steps increasing, epochs not
// decreasing, the value a number or null (not finite).
void read_curve(const QJsonValue& curve, Metric metric, const QString& where,
                std::vector<MetricRow>& rows) {
    if (!curve.isArray())
        fail(where, QStringLiteral("must be an array of [step, epoch, wall_time_s, value] rows, "
                                   "got ") +
                        describe(curve));
    const QJsonArray items = curve.toArray();
    std::optional<MetricRow> previous;
    for (qsizetype i = 0; i < items.size(); ++i) {
        const QString row_where = where + QStringLiteral(" row %1").arg(i + 1);
        const QJsonArray row = items[i].toArray();
        if (!items[i].isArray() || row.size() != 4)
            fail(row_where, QStringLiteral("must be [step, epoch, wall_time_s, value], got ") +
                                (items[i].isArray() ? QStringLiteral("%1 items").arg(row.size())
                                                    : describe(items[i])));
        if (!is_whole(row[0], 0, largest_whole))
            fail(row_where,
                 QStringLiteral("the step must be a whole number, got ") + describe(row[0]));
        if (!is_whole(row[1], 0, largest_int))
            fail(row_where,
                 QStringLiteral("the epoch must be a whole number, got ") + describe(row[1]));
        if (!row[2].isDouble() || row[2].toDouble() < 0)
            fail(row_where, QStringLiteral("the wall time must be a number of seconds from 0, "
                                           "got ") +
                                describe(row[2]));
        if (!row[3].isDouble() && !row[3].isNull())
            fail(row_where,
                 QStringLiteral("the value must be a number or null, got ") + describe(row[3]));
        MetricRow out;
        out.step = std::int64_t(row[0].toDouble());
        out.epoch = int(row[1].toDouble());
        out.wall_time = row[2].toDouble();
        out.metric = metric;
        out.value = row[3].isNull() ? std::numeric_limits<double>::quiet_NaN() : row[3].toDouble();
        if (previous && out.step <= previous->step)
            fail(row_where, QStringLiteral("step %1 follows step %2: steps must increase")
                                .arg(out.step)
                                .arg(previous->step));
        if (previous && out.epoch < previous->epoch)
            fail(row_where, QStringLiteral("epoch %1 follows epoch %2: epochs must not decrease")
                                .arg(out.epoch)
                                .arg(previous->epoch));
        rows.push_back(out);
        previous = out;
    }
}

RunWithMetrics read_run(const QJsonValue& value, qsizetype index) {
    const QString number = QStringLiteral("run %1").arg(index + 1);
    if (!value.isObject())
        fail(number, QStringLiteral("must be an object, got ") + describe(value));
    const QJsonObject object = value.toObject();
    // The name first: every later message names the run by it.
    const QString name = Fields(object, number, {}, run_keys).string(QStringLiteral("name"), true);
    const Fields run(object, QStringLiteral("%1 (\"%2\")").arg(number, name), {}, run_keys);

    RunWithMetrics out;
    StoredRun& stored = out.run;
    stored.name = name;
    stored.tags = run.strings(QStringLiteral("tags"));
    const QString state = run.string(QStringLiteral("state"), true);
    const auto parsed_state = EnumNames<RunState>::table.parse(state.toStdString());
    if (!parsed_state)
        fail(run.where(QStringLiteral("state")),
             QStringLiteral("\"%1\" is not a state; the states are %2")
                 .arg(state, QString::fromStdString(EnumNames<RunState>::table.choices(", "))));
    stored.state = *parsed_state;
    stored.message = run.string(QStringLiteral("message"));

    const QJsonValue config = run.required(QStringLiteral("config"));
    if (!config.isObject())
        fail(run.where(QStringLiteral("config")),
             QStringLiteral("must be an object (a run spec), got ") + describe(config));
    try {
        stored.spec = run_spec_from_json(QJsonDocument(config.toObject()).toJson());
    } catch (const Error& error) {
        // One problem per line, each with its place, as report_problems prints them.
        QStringList lines = QString::fromStdString(error.what()).split(QLatin1Char('\n'));
        for (QString& line : lines)
            line.prepend(run.where(QStringLiteral("config")) + QStringLiteral(": "));
        throw ExchangeError(lines.join(QLatin1Char('\n')).toStdString());
    }

    if (const auto info = run.object(QStringLiteral("info"), info_keys)) {
        stored.info = read_info(*info);
        stored.started = true;
    }
    stored.machine = run.string(QStringLiteral("machine"));
    stored.created = run.date(QStringLiteral("created"));
    stored.started_at = run.date(QStringLiteral("started"));
    stored.ended_at = run.date(QStringLiteral("ended"));
    if (const auto summary = run.object(QStringLiteral("summary"), summary_keys))
        read_summary(*summary, stored);

    if (const auto metrics = run.optional(QStringLiteral("metrics"))) {
        if (!metrics->isObject())
            fail(run.where(QStringLiteral("metrics")),
                 QStringLiteral("must be an object of curves by metric name, got ") +
                     describe(*metrics));
        const QJsonObject curves = metrics->toObject();
        for (auto it = curves.begin(); it != curves.end(); ++it) {
            const QString where = run.where(QStringLiteral("metrics.") + it.key());
            const auto metric = metric_named(it.key());
            if (!metric)
                fail(where,
                     QStringLiteral("unknown metric; the metrics are ") + metric_name_list());
            read_curve(it.value(), *metric, where, out.rows);
        }
    }
    return out;
}

}  // namespace

QByteArray export_runs(const RunStore& store, const std::vector<std::int64_t>& ids) {
    QByteArray runs;
    for (std::int64_t id : ids)
        runs += (runs.isEmpty() ? "\n" : ",\n") + run_text(store.run(id), store.metrics(id));
    return QByteArray("{\n    \"format\": \"") + exchange_format +
           "\",\n    \"version\": " + QByteArray::number(exchange_version) + ",\n    \"runs\": [" +
           indented(runs, 8) + (runs.isEmpty() ? "]" : "\n    ]") + "\n}\n";
}

bool save_exchange(const RunStore& store, const std::vector<std::int64_t>& ids, const QString& path,
                   QString* error) {
    const QByteArray document = export_runs(store, ids);
    const QString reason = write_whole_file(
        path, [&](QIODevice& device) { return device.write(document) == document.size(); });
    if (!reason.isEmpty() && error != nullptr)
        *error = QObject::tr("Cannot write %1: %2. Choose another folder or file name.")
                     .arg(QDir::toNativeSeparators(path), reason);
    return reason.isEmpty();
}

std::vector<RunWithMetrics> parse_exchange(const QByteArray& document) {
    QJsonParseError parse_error;
    const QJsonDocument json = QJsonDocument::fromJson(document, &parse_error);
    if (parse_error.error != QJsonParseError::NoError)
        throw ExchangeError(
            QStringLiteral("not valid JSON at %1: %2")
                .arg(json_error_position(document, parse_error.offset), parse_error.errorString())
                .toStdString());
    const QString expected_format =
        QStringLiteral("not a ScaleLab runs file: it must be an object with \"format\": \"%1\"")
            .arg(QLatin1String(exchange_format));
    if (!json.isObject())
        throw ExchangeError(expected_format.toStdString());
    const QJsonObject top = json.object();
    if (top.value(QStringLiteral("format")).toString() != QLatin1String(exchange_format))
        throw ExchangeError(expected_format.toStdString());
    const Fields file(top, {}, {}, {"format", "version", "runs"});
    const int version = int(file.whole(QStringLiteral("version"), 1, largest_int));
    if (version > exchange_version)
        fail(QStringLiteral("version"),
             QStringLiteral("the file is version %1, written by a newer ScaleLab; this one reads "
                            "version %2: import it with that ScaleLab (or newer)")
                 .arg(version)
                 .arg(exchange_version));
    const QJsonValue runs = file.required(QStringLiteral("runs"));
    if (!runs.isArray())
        fail(QStringLiteral("runs"), QStringLiteral("must be an array, got ") + describe(runs));

    std::vector<RunWithMetrics> out;
    const QJsonArray items = runs.toArray();
    for (qsizetype i = 0; i < items.size(); ++i)
        out.push_back(read_run(items[i], i));
    return out;
}

std::vector<std::int64_t> import_runs(RunStore& store, const QByteArray& document) {
    std::vector<RunWithMetrics> runs = parse_exchange(document);
    for (RunWithMetrics& imported : runs)
        if (is_active(imported.run.state)) {
            imported.run.state = RunState::Interrupted;
            if (imported.run.message.isEmpty())
                imported.run.message = QObject::tr("exported before it ended");
        }
    return store.insert_runs(runs);
}

bool save_stored_metrics_csv(const RunStore& store, const std::vector<std::int64_t>& ids,
                             const QString& path, QString* error) {
    std::vector<RunRecord> records;
    for (std::int64_t id : ids)
        records.push_back(store.load_record(id));
    std::vector<const RunRecord*> pointers;
    for (const RunRecord& record : records)
        pointers.push_back(&record);
    return save_metrics_csv(pointers, path, error);
}

}  // namespace scalelab
