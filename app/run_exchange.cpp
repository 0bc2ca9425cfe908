#include "run_exchange.h"

#include <QBuffer>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>
#include <QTemporaryDir>

#include <array>
#include <cmath>
#include <limits>
#include <memory>
#include <optional>

#include "exchange_reader.h"
#include "json_number.h"
#include "metrics_export.h"
#include "metrics_file_import.h"
#include "run_spec_json.h"
#include "store_json.h"
#include "whole_file_writer.h"

namespace scalelab {

namespace {

// JSON numbers are doubles: whole numbers are exact up to 2^53.
constexpr double largest_whole = 9007199254740992.0;

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
            {QStringLiteral("group"), run.group},
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

// JSON text of a number as Qt's JSON writer gives it (whole numbers without a fraction, else
// the shortest form that reads back the same), null when it is not finite.
QByteArray number_text(double value) {
    if (!std::isfinite(value))
        return QByteArrayLiteral("null");
    if (std::floor(value) == value && std::abs(value) < largest_whole)
        return QByteArray::number(qint64(value));
    return QByteArray::number(value, 'g', QLocale::FloatingPointShortest);
}

// Thrown from inside a row callback to stop the export when the device takes no more.
struct DeviceFull {};

// Text for a QIODevice, handed over a megabyte at a time.
class ChunkedOutput {
  public:
    explicit ChunkedOutput(QIODevice& device) : device_(device) {}
    void add(const QByteArray& text) {
        buffer_ += text;
        if (buffer_.size() >= (1 << 20))
            flush();
    }
    void flush() {
        if (device_.write(buffer_) != buffer_.size())
            throw DeviceFull{};
        buffer_.clear();
    }

  private:
    QIODevice& device_;
    QByteArray buffer_;
};

// One run, indented to sit in the file's "runs" array: its fields as QJsonDocument::Indented
// writes them, then "metrics" with one row to a line (Indented would spread each over six),
// streamed from the store a row at a time.
void write_run(const RunStore& store, std::int64_t id, ChunkedOutput& out) {
    const QByteArray indent(8, ' ');
    QByteArray fields = QJsonDocument(run_json(store.run(id))).toJson(QJsonDocument::Indented);
    fields.chop(3);  // "\n}\n": the metrics come last
    out.add(indent + fields.replace('\n', '\n' + indent) + ",\n" + indent + "    \"metrics\": {");
    bool first_curve = true;
    for (const Metric metric : all_metrics) {
        bool first_row = true;
        store.for_each_row(id, metric, [&](const MetricRow& row) {
            if (first_row) {
                const std::string_view name = metric_name(metric);
                out.add((first_curve ? "\n" : ",\n") + indent + "        \"" +
                        QByteArray(name.data(), qsizetype(name.size())) + "\": [\n");
                first_curve = false;
            } else {
                out.add(",\n");
            }
            first_row = false;
            out.add(indent + "            [" + number_text(double(row.step)) + ',' +
                    QByteArray::number(row.epoch) + ',' + number_text(row.wall_time) + ',' +
                    number_text(row.value) + ']');
        });
        if (!first_row)
            out.add('\n' + indent + "        ]");
    }
    out.add(first_curve ? "}\n" + indent + '}' : '\n' + indent + "    }\n" + indent + '}');
}

}  // namespace

bool write_exchange(const RunStore& store, const std::vector<std::int64_t>& ids,
                    QIODevice& device) {
    ChunkedOutput out(device);
    try {
        out.add(QByteArray("{\n    \"format\": \"") + exchange_format + "\",\n    \"version\": " +
                QByteArray::number(exchange_version) + ",\n    \"runs\": [");
        for (std::size_t i = 0; i < ids.size(); ++i) {
            out.add(i == 0 ? "\n" : ",\n");
            write_run(store, ids[i], out);
        }
        out.add(ids.empty() ? "]\n}\n" : "\n    ]\n}\n");
        out.flush();
    } catch (const DeviceFull&) {
        return false;
    }
    return true;
}

QByteArray export_runs(const RunStore& store, const std::vector<std::int64_t>& ids) {
    QBuffer buffer;
    buffer.open(QIODevice::WriteOnly);
    write_exchange(store, ids, buffer);
    return buffer.data();
}

bool save_exchange(const RunStore& store, const std::vector<std::int64_t>& ids, const QString& path,
                   QString* error) {
    const QString reason = write_whole_file(
        path, [&](QIODevice& device) { return write_exchange(store, ids, device); });
    if (!reason.isEmpty() && error != nullptr)
        *error = cannot_write_message(path, reason);
    return reason.isEmpty();
}

std::vector<std::int64_t> import_runs(RunStore& store, const QByteArray& document) {
    std::vector<std::int64_t> ids;
    store.insert_streamed(
        [&](RunStore::Insertion& insertion) { ids = read_exchange(document, insertion); });
    return ids;
}

std::vector<std::int64_t> import_runs_file(RunStore& store, const QString& path) {
    std::vector<std::int64_t> ids;
    store.insert_streamed(
        [&](RunStore::Insertion& insertion) { ids = read_exchange_file(path, insertion); });
    return ids;
}

std::vector<std::int64_t> import_runs_from_store(RunStore& store, const QString& other) {
    if (QFileInfo(other).canonicalFilePath() == QFileInfo(store.path()).canonicalFilePath())
        throw ExchangeError("this is the run store being imported into: its runs are there");
    const std::unique_ptr<RunStore> source = RunStore::open(other, StoreAccess::Read);
    source->require_sound();
    std::vector<std::int64_t> ids;
    for (const StoredRun& run : source->list_runs())
        ids.push_back(run.id);
    // Through an exchange file, so that a store's runs meet every check a file's do.
    QTemporaryDir folder;
    const QString exchange = folder.filePath(QStringLiteral("runs.scalelab.json"));
    QString error;
    if (!folder.isValid() || !save_exchange(*source, ids, exchange, &error))
        throw ExchangeError(("cannot write a temporary exchange file: " + error).toStdString());
    return import_runs_file(store, exchange);
}

std::vector<std::int64_t> import_any_runs_file(RunStore& store, const QString& path) {
    if (is_sqlite_file(path))
        return import_runs_from_store(store, path);
    if (is_metrics_file(path))
        return import_runs(store,
                           exchange_from_metrics_file(path, QFileInfo(path).completeBaseName()));
    return import_runs_file(store, path);
}

bool is_sqlite_file(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) && file.read(16) == QByteArray("SQLite format 3", 16);
}

bool save_stored_metrics_csv(const RunStore& store, const std::vector<std::int64_t>& ids,
                             const QString& path, QString* error) {
    // Each run's fields first: an id not in the store is refused before the file is touched.
    std::vector<StoredRun> runs;
    for (const std::int64_t id : ids)
        runs.push_back(store.run(id));
    return save_text_file(path, error, [&](QTextStream& out) {
        out << metrics_csv_header << '\n';
        for (const StoredRun& run : runs) {
            const QString name = csv_field(run.name);
            const QString group = csv_field(run.group);
            for (const Metric metric : all_metrics) {
                const QString metric_text = QString::fromUtf8(metric_name(metric));
                store.for_each_row(run.id, metric, [&](const MetricRow& row) {
                    write_metrics_csv_row(out, name, run.id, metric_text, row.step, row.epoch,
                                          row.wall_time, row.value, group);
                });
            }
        }
    });
}

}  // namespace scalelab
