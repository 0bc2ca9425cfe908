#include "exchange_reader.h"

#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLocale>

#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "error.h"
#include "printable_text.h"
#include "quoted_text.h"
#include "repeats.h"
#include "run_exchange.h"
#include "run_group.h"
#include "run_labels.h"
#include "run_spec_json.h"

namespace scalelab {

namespace {

using Json = nlohmann::json;

// JSON numbers are doubles: whole numbers are exact up to 2^53.
constexpr double largest_exact_whole = 9007199254740992.0;
constexpr double largest_int = std::numeric_limits<int>::max();
// A run's message, machine and warnings: far more than ScaleLab ever writes.
constexpr qsizetype longest_text = 65536;
// The format nests five levels (file, runs, run, metrics, curve, row) and a config a few more.
constexpr std::size_t deepest_nesting = 32;
// Metric rows written to the store at a time.
constexpr std::size_t rows_per_chunk = 8192;

[[noreturn]] void fail(const QString& where, const QString& problem) {
    throw ExchangeError((where + QStringLiteral(": ") + problem).toStdString());
}

// A text from the file as a message quotes it (quoted_text.h): cut, without control characters.
QString shown_text(const std::string& text, char quote = '"') {
    return QString::fromStdString(quoted_text(text, quote));
}

QString shown_text(const QString& text) {
    return shown_text(text.toStdString());
}

// A key as a place names it: plain (`summary.steps`), unless it needs cutting or escaping.
QString key_in_place(const QString& key) {
    const QString shown = shown_text(key);
    return shown == QLatin1Char('"') + key + QLatin1Char('"') ? key : shown;
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
            return QStringLiteral("the string ") + shown_text(value.toString());
        case QJsonValue::Array:
            return QStringLiteral("an array");
        case QJsonValue::Object:
            return QStringLiteral("an object");
        case QJsonValue::Undefined:
            break;
    }
    return QStringLiteral("nothing");
}

QJsonValue to_qt(const Json& value) {
    if (value.is_number())
        return value.get<double>();
    if (value.is_string())
        return QString::fromStdString(value.get<std::string>());
    if (value.is_boolean())
        return value.get<bool>();
    if (value.is_null())
        return QJsonValue::Null;
    // Objects and arrays: the parser checked the UTF-8 and the nesting, so dump() cannot fail.
    const QJsonDocument document = QJsonDocument::fromJson(QByteArray::fromStdString(value.dump()));
    return document.isObject() ? QJsonValue(document.object()) : QJsonValue(document.array());
}

bool is_whole(const QJsonValue& value, double low, double high) {
    if (!value.isDouble())
        return false;
    const double v = value.toDouble();
    return std::floor(v) == v && v >= low && v <= high;
}

// ---------------------------------------------------------------------------------------------
// A run's fields (all but its metrics, which come as a stream)

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
        const QString field =
            path_.isEmpty() ? key_in_place(key) : path_ + QLatin1Char('.') + key_in_place(key);
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
        const QString text = value.toString();
        if (text.size() > longest_text)
            fail(where(key), QStringLiteral("has %1 characters, more than the %2 a run keeps: "
                                            "shorten it")
                                 .arg(text.size())
                                 .arg(longest_text));
        return text;
    }
    double whole(const QString& key, double low, double high) const {
        const QJsonValue value = required(key);
        if (!is_whole(value, low, high))
            fail(where(key), QStringLiteral("must be a whole number from %1 to %2, got %3")
                                 .arg(low)
                                 .arg(high, 0, 'f', 0)
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
            if (!items[i].isString() || items[i].toString().size() > longest_text)
                fail(where(key), QStringLiteral("item %1 must be a string of up to %2 "
                                                "characters, got %3")
                                     .arg(i + 1)
                                     .arg(longest_text)
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

const QStringList run_keys{"name",    "tags",    "state", "message", "config",  "info", "machine",
                           "created", "started", "ended", "summary", "metrics", "group"};
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

RunInfo read_info(const Fields& info, const RunSpec& spec) {
    RunInfo out;
    out.devices = int(info.whole(QStringLiteral("devices"), 1, largest_int));
    // The devices that ran it are the ones its config asked for.
    if (out.devices != spec.devices)
        fail(info.where(QStringLiteral("devices")),
             QStringLiteral("%1 devices, but its config asks for %2: the file was edited; export "
                            "the run again")
                 .arg(out.devices)
                 .arg(spec.devices));
    out.threads_per_device = int(info.whole(QStringLiteral("threads_per_device"), 0, largest_int));
    out.cores = int(info.whole(QStringLiteral("cores"), 0, largest_int));
    out.global_batch = int(info.whole(QStringLiteral("global_batch"), 0, largest_int));
    out.steps_per_epoch = int(info.whole(QStringLiteral("steps_per_epoch"), 0, largest_int));
    out.parameters = std::size_t(info.whole(QStringLiteral("parameters"), 0, largest_exact_whole));
    for (const QString& warning : info.strings(QStringLiteral("warnings")))
        out.warnings.push_back(warning.toStdString());
    return out;
}

TargetReached read_target(const Fields& target) {
    TargetReached out;
    out.target = target.number(QStringLiteral("target"));
    out.seconds = target.number(QStringLiteral("seconds"));
    out.step = std::int64_t(target.whole(QStringLiteral("step"), 0, largest_exact_whole));
    out.epoch = int(target.whole(QStringLiteral("epoch"), 0, largest_int));
    out.images = target.number(QStringLiteral("images"));
    return out;
}

void read_summary(const Fields& summary, StoredRun& run) {
    run.steps = std::int64_t(summary.whole(QStringLiteral("steps"), 0, largest_exact_whole));
    run.epochs = int(summary.whole(QStringLiteral("epochs"), 0, largest_int));
    run.train_seconds = summary.number(QStringLiteral("train_seconds"));
    run.best_val_accuracy = summary.number_or_null(QStringLiteral("best_val_accuracy"));
    run.mean_images_per_s = summary.number_or_null(QStringLiteral("mean_images_per_s"));
    run.other_programs_share = summary.number_or_null(QStringLiteral("other_programs_share"));
    const qsizetype targets = summary.array(QStringLiteral("targets")).size();
    for (qsizetype i = 0; i < targets; ++i)
        run.targets.push_back(read_target(summary.item(QStringLiteral("targets"), i, target_keys)));
}

// `run 2 ("cnn")`, or `run 2` before its name is known.
QString run_place(qsizetype index, const QString& name) {
    const QString number = QStringLiteral("run %1").arg(index + 1);
    return name.isNull() ? number : QStringLiteral("%1 (%2)").arg(number, shown_text(name));
}

StoredRun read_run_fields(const QJsonObject& object, qsizetype index) {
    // The name first: every later message names the run by it.
    const QString name =
        Fields(object, run_place(index, {}), {}, run_keys).string(QStringLiteral("name"), true);
    const Fields run(object, run_place(index, name), {}, run_keys);
    if (const QString problem = run_name_problem(name); !problem.isEmpty())
        fail(run.where(QStringLiteral("name")), problem);

    StoredRun stored;
    stored.name = name;
    stored.tags = run.strings(QStringLiteral("tags"));
    if (const QString problem = tags_problem(stored.tags); !problem.isEmpty())
        fail(run.where(QStringLiteral("tags")), problem);
    const QString state = run.string(QStringLiteral("state"), true);
    const auto parsed_state = EnumNames<RunState>::table.parse(state.toStdString());
    if (!parsed_state)
        fail(run.where(QStringLiteral("state")),
             QStringLiteral("%1 is not a state; the states are %2")
                 .arg(shown_text(state),
                      QString::fromStdString(EnumNames<RunState>::table.choices(", "))));
    stored.state = *parsed_state;
    stored.message = run.string(QStringLiteral("message"));
    stored.group = run.string(QStringLiteral("group"));

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
        stored.info = read_info(*info, stored.spec);
        stored.started = true;
    }
    stored.machine = run.string(QStringLiteral("machine"));
    stored.created = run.date(QStringLiteral("created"));
    stored.started_at = run.date(QStringLiteral("started"));
    stored.ended_at = run.date(QStringLiteral("ended"));
    if (const auto summary = run.object(QStringLiteral("summary"), summary_keys))
        read_summary(*summary, stored);
    // A run exported while it was queued or running: no process here will finish it.
    if (is_active(stored.state)) {
        stored.state = RunState::Interrupted;
        if (stored.message.isEmpty())
            stored.message = QObject::tr("exported before it ended");
    }
    return stored;
}

// ---------------------------------------------------------------------------------------------
// The stream

std::optional<Metric> metric_named(const std::string& name) {
    for (Metric metric : all_metrics)
        if (name == metric_name(metric))
            return metric;
    return std::nullopt;
}

QString metric_name_list() {
    QStringList names;
    for (Metric metric : all_metrics)
        names.append(QString::fromUtf8(metric_name(metric)));
    return names.join(QStringLiteral(", "));
}

// The groups of the file being imported, each under a new id (new_group_id) so that it never joins
// a group already in the store, nor the same file imported before. A run joins its group only when
// it differs from the group's first run in nothing but the seed.
class ImportedGroups {
  public:
    StoredRun joined(StoredRun run, qsizetype index) {
        if (run.group.isEmpty())
            return run;
        const auto [group, added] = groups_.try_emplace(run.group, Group{new_group_id(), run.spec});
        if (!added)
            if (const QString problem = group_problem({group->second.first_spec, run.spec});
                !problem.isEmpty())
                fail(run_place(index, run.name) + QStringLiteral(", group"), problem);
        run.group = group->second.id;
        return run;
    }

  private:
    struct Group {
        QString id;
        RunSpec first_spec;
    };
    std::map<QString, Group> groups_;  // by the file's id
};

// Takes nlohmann/json's SAX events for one exchange file. The frames on its stack are the
// places the format gives meaning to (the file, its runs, a run, its metrics, a curve, a row);
// any other value (a run's name, its config, the version) is built whole as a Json value and
// handed to its frame when it ends. Every object's keys are kept to refuse one given twice.
class ExchangeStream {
  public:
    explicit ExchangeStream(RunStore::Insertion& insertion) : insertion_(insertion) {}

    const std::vector<std::int64_t>& ids() const { return ids_; }

    bool null() { return scalar(Json(nullptr)); }
    bool boolean(bool value) { return scalar(Json(value)); }
    bool number_integer(std::int64_t value) { return scalar(Json(value)); }
    bool number_unsigned(std::uint64_t value) { return scalar(Json(value)); }
    bool number_float(double value, const std::string&) { return scalar(Json(value)); }
    bool string(std::string& value) { return scalar(Json(std::move(value))); }
    bool binary(Json::binary_t&) { return scalar(Json()); }  // not in JSON text

    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    bool key(std::string& name) {
        Frame& frame = frames_.back();
        if (!frame.keys.insert(name).second)
            fail(place(false),
                 QStringLiteral("the key %1 is given twice: keep one").arg(shown_text(name)));
        frame.key = std::move(name);
        return true;
    }

    bool parse_error(std::size_t, const std::string& last_token,
                     const nlohmann::detail::exception& error) {
        // nlohmann says "[json.exception.parse_error.101] parse error at line 3, column 14:
        // syntax error ...; last read: '<token>'": the place and the reason, with the token cut.
        std::string what = error.what();
        const std::size_t at = what.find(" at line ");
        what = at == std::string::npos ? what.substr(what.find(']') + 2) : what.substr(at + 4);
        QString message = QString::fromStdString(what);
        message.replace(QLatin1Char('\'') + QString::fromStdString(last_token) + QLatin1Char('\''),
                        shown_text(last_token, '\''));
        throw ExchangeError(
            QStringLiteral("not valid JSON at %1").arg(printable(message)).toStdString());
    }

    // After the parser is done: what the file must have had.
    void check_complete() const {
        if (!seen_format_)
            throw ExchangeError(expected_format().toStdString());
        if (!seen_version_)
            fail(QStringLiteral("version"), QStringLiteral("missing: add it, or export the runs "
                                                           "again"));
        if (!seen_runs_)
            fail(QStringLiteral("runs"), QStringLiteral("missing: add it, or export the runs "
                                                        "again"));
    }

  private:
    enum class Kind { File, Runs, Run, Metrics, Curve, Row, Value };

    struct Frame {
        Kind kind = Kind::Value;
        bool is_object = false;
        std::set<std::string> keys;  // the object's keys so far
        std::string key;             // the current member's
        Json value;                  // Kind::Value: what is built
        std::size_t items = 0;       // the array's items so far
    };

    static Frame new_frame(Kind kind, bool is_object) {
        Frame frame;
        frame.kind = kind;
        frame.is_object = is_object;
        if (kind == Kind::Value)
            frame.value = is_object ? Json::object() : Json::array();
        return frame;
    }

    static QString expected_format() {
        return QStringLiteral(
                   "not a ScaleLab runs file: it must be an object with \"format\": "
                   "\"%1\" first")
            .arg(QLatin1String(exchange_format));
    }

    // The place of the current value as messages name it: `run 2 ("cnn"), config.lr`,
    // `run 2 ("cnn"), metrics.train_loss row 9`. Without `with_key`, the object's own place.
    QString place(bool with_key = true) const {
        QString text;
        for (std::size_t i = 0; i < frames_.size(); ++i) {
            const Frame& frame = frames_[i];
            const bool last = i + 1 == frames_.size();
            if (frame.kind == Kind::Run)
                text = run_place(qsizetype(ids_.size()), run_name_);
            if (frame.kind == Kind::Row)
                text += QStringLiteral(" row %1").arg(curve_rows_);
            const bool member_opened = !last && frames_[i + 1].kind != Kind::Runs;
            if (frame.is_object && !frame.key.empty() && (member_opened || (last && with_key)))
                text += (text.isEmpty()            ? QString()
                         : frame.kind == Kind::Run ? QStringLiteral(", ")
                                                   : QStringLiteral(".")) +
                        key_in_place(QString::fromStdString(frame.key));
            if (!frame.is_object && frame.kind == Kind::Value && !last)
                text += QStringLiteral(" item %1").arg(frame.items + 1);
        }
        return text.isEmpty() ? QStringLiteral("the file") : text;
    }

    // What a new object or array (`is_object`) is, from where it starts.
    Kind kind_of_new(bool is_object) const {
        if (frames_.empty())
            return is_object ? Kind::File : Kind::Value;
        const Frame& parent = frames_.back();
        switch (parent.kind) {
            case Kind::File:
                return !is_object && parent.key == "runs" ? Kind::Runs : Kind::Value;
            case Kind::Runs:
                return is_object ? Kind::Run : Kind::Value;
            case Kind::Run:
                return is_object && parent.key == "metrics" ? Kind::Metrics : Kind::Value;
            case Kind::Metrics:
                return is_object ? Kind::Value : Kind::Curve;
            case Kind::Curve:
                return is_object ? Kind::Value : Kind::Row;
            case Kind::Row:
            case Kind::Value:
                break;
        }
        return Kind::Value;
    }

    bool open(bool is_object) {
        if (frames_.size() >= deepest_nesting)
            fail(place(), QStringLiteral("nested more than %1 levels deep, which no runs file "
                                         "is")
                              .arg(deepest_nesting));
        const Kind kind = kind_of_new(is_object);
        if (kind == Kind::Value && !frames_.empty() && frames_.back().kind == Kind::Value) {
            // Inside a value being built: the parent keeps a place for this one.
            frames_.push_back(new_frame(kind, is_object));
            return true;
        }
        begin(kind, is_object);
        return true;
    }

    void begin(Kind kind, bool is_object) {
        switch (kind) {
            case Kind::Runs:
                if (!seen_format_)
                    throw ExchangeError(expected_format().toStdString());
                seen_runs_ = true;
                break;
            case Kind::Run:
                run_fields_ = QJsonObject();
                run_name_ = QString();
                run_id_ = insertion_.begin_run();
                break;
            case Kind::Curve: {
                const std::optional<Metric> metric = metric_named(frames_.back().key);
                if (!metric)
                    fail(place(),
                         QStringLiteral("unknown metric; the metrics are ") + metric_name_list());
                curve_ = *metric;
                curve_rows_ = 0;
                previous_.reset();
                break;
            }
            case Kind::Row:
                ++curve_rows_;
                row_.clear();
                break;
            case Kind::Metrics:
            case Kind::File:
            case Kind::Value:
                break;
        }
        frames_.push_back(new_frame(kind, is_object));
    }

    bool close() {
        Frame frame = std::move(frames_.back());
        frames_.pop_back();
        switch (frame.kind) {
            case Kind::Value:
                return scalar(std::move(frame.value));
            case Kind::Row:
                end_row();
                break;
            case Kind::Curve:
                flush_rows();
                break;
            case Kind::Run:
                flush_rows();
                insertion_.finish_run(
                    run_id_, groups_.joined(read_run_fields(run_fields_, qsizetype(ids_.size())),
                                            qsizetype(ids_.size())));
                ids_.push_back(run_id_);
                break;
            case Kind::Metrics:
            case Kind::Runs:
            case Kind::File:
                break;
        }
        if (!frames_.empty())
            ++frames_.back().items;
        return true;
    }

    // A whole value (a scalar, or an object or array just built) in the current frame.
    bool scalar(Json value) {
        if (frames_.empty())
            throw ExchangeError(expected_format().toStdString());
        Frame& frame = frames_.back();
        switch (frame.kind) {
            case Kind::Value:
                if (frame.is_object)
                    frame.value[frame.key] = std::move(value);
                else
                    frame.value.push_back(std::move(value));
                return true;
            case Kind::File:
                top_level_value(frame.key, value);
                break;
            case Kind::Runs:
                fail(QStringLiteral("run %1").arg(frame.items + 1),
                     QStringLiteral("must be an object, got ") + describe(to_qt(value)));
            case Kind::Run:
                if (frame.key == "metrics" && !value.is_null())
                    fail(place(), QStringLiteral("must be an object of curves by metric name, "
                                                 "got ") +
                                      describe(to_qt(value)));
                if (frame.key == "name" && value.is_string())
                    run_name_ = QString::fromStdString(value.get<std::string>());
                run_fields_.insert(QString::fromStdString(frame.key), to_qt(value));
                break;
            case Kind::Metrics:
                fail(place(),
                     QStringLiteral("must be an array of [step, epoch, wall_time_s, value] "
                                    "rows, got ") +
                         describe(to_qt(value)));
            case Kind::Curve:
                fail(place() + QStringLiteral(" row %1").arg(frame.items + 1),
                     QStringLiteral("must be [step, epoch, wall_time_s, value], got ") +
                         describe(to_qt(value)));
            case Kind::Row:
                row_.push_back(to_qt(value));
                break;
        }
        ++frame.items;
        return true;
    }

    void top_level_value(const std::string& key, const Json& value) {
        if (key == "format") {
            if (!value.is_string() || value.get<std::string>() != exchange_format)
                throw ExchangeError(expected_format().toStdString());
            seen_format_ = true;
            return;
        }
        if (!seen_format_)
            throw ExchangeError(expected_format().toStdString());
        if (key == "version") {
            const QJsonValue version = to_qt(value);
            if (!is_whole(version, 1, largest_int))
                fail(QStringLiteral("version"),
                     QStringLiteral("must be a whole number from 1, got ") + describe(version));
            if (version.toDouble() > exchange_version)
                fail(QStringLiteral("version"),
                     QStringLiteral("the file is version %1, written by a newer ScaleLab; this "
                                    "one reads version %2: import it with that ScaleLab (or "
                                    "newer)")
                         .arg(version.toDouble())
                         .arg(exchange_version));
            seen_version_ = true;
            return;
        }
        if (key == "runs")
            fail(QStringLiteral("runs"),
                 QStringLiteral("must be an array, got ") + describe(to_qt(value)));
        fail(key_in_place(QString::fromStdString(key)),
             QStringLiteral("unknown field; the fields are format, version, runs"));
    }

    // One row: [step, epoch, wall_time_s, value], steps increasing, epochs not decreasing, the
    // value a number or null (not finite).
    void end_row() {
        const QString where = place() + QStringLiteral(" row %1").arg(curve_rows_);
        if (row_.size() != 4)
            fail(where, QStringLiteral("must be [step, epoch, wall_time_s, value], got %1 items")
                            .arg(row_.size()));
        if (!is_whole(row_[0], 0, largest_exact_whole))
            fail(where,
                 QStringLiteral("the step must be a whole number, got ") + describe(row_[0]));
        if (!is_whole(row_[1], 0, largest_int))
            fail(where,
                 QStringLiteral("the epoch must be a whole number, got ") + describe(row_[1]));
        if (!row_[2].isDouble() || row_[2].toDouble() < 0)
            fail(where, QStringLiteral("the wall time must be a number of seconds from 0, got ") +
                            describe(row_[2]));
        if (!row_[3].isDouble() && !row_[3].isNull())
            fail(where,
                 QStringLiteral("the value must be a number or null, got ") + describe(row_[3]));
        const MetricRow row{.step = std::int64_t(row_[0].toDouble()),
                            .epoch = int(row_[1].toDouble()),
                            .wall_time = row_[2].toDouble(),
                            .metric = curve_,
                            .value = row_[3].isNull() ? std::numeric_limits<double>::quiet_NaN()
                                                      : row_[3].toDouble()};
        if (previous_ && row.step <= previous_->step)
            fail(where, QStringLiteral("step %1 follows step %2: steps must increase")
                            .arg(row.step)
                            .arg(previous_->step));
        if (previous_ && row.epoch < previous_->epoch)
            fail(where, QStringLiteral("epoch %1 follows epoch %2: epochs must not decrease")
                            .arg(row.epoch)
                            .arg(previous_->epoch));
        previous_ = row;
        rows_.push_back(row);
        if (rows_.size() >= rows_per_chunk)
            flush_rows();
    }

    void flush_rows() {
        if (rows_.empty())
            return;
        insertion_.add_rows(run_id_, rows_);
        rows_.clear();
    }

    RunStore::Insertion& insertion_;
    std::vector<Frame> frames_;
    bool seen_format_ = false;
    bool seen_version_ = false;
    bool seen_runs_ = false;
    // The run being read.
    std::int64_t run_id_ = 0;
    QJsonObject run_fields_;
    QString run_name_;
    // The curve being read.
    Metric curve_ = Metric::TrainLoss;
    std::size_t curve_rows_ = 0;
    std::optional<MetricRow> previous_;
    std::vector<QJsonValue> row_;
    std::vector<MetricRow> rows_;  // checked, not yet written
    std::vector<std::int64_t> ids_;
    ImportedGroups groups_;
};

template <typename Input>
std::vector<std::int64_t> read_stream(Input&& input, RunStore::Insertion& insertion) {
    ExchangeStream stream(insertion);
    Json::sax_parse(std::forward<Input>(input), &stream);
    stream.check_complete();
    return stream.ids();
}

}  // namespace

std::vector<std::int64_t> read_exchange(const QByteArray& document,
                                        RunStore::Insertion& insertion) {
    return read_stream(std::string_view(document.constData(), std::size_t(document.size())),
                       insertion);
}

std::vector<std::int64_t> read_exchange_file(const QString& path, RunStore::Insertion& insertion) {
    // Only a regular file: a pipe would hold the store's lock until something writes to it.
    const QFileInfo info(path);
    if (info.exists() && !info.isFile())
        throw ExchangeError(info.isDir() ? "it is a folder: name a .scalelab.json file"
                                         : "it is not a regular file (a device, a pipe or a "
                                           "socket): name a .scalelab.json file");
    std::ifstream file(QFile::encodeName(path).toStdString(), std::ios::binary);
    if (!file)
        throw ExchangeError(QStringLiteral("cannot read it: %1")
                                .arg(QString::fromLocal8Bit(std::strerror(errno)))
                                .toStdString());
    return read_stream(file, insertion);
}

}  // namespace scalelab
