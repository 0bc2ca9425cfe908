#include "run_spec_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "error.h"
#include "json_duplicate_key.h"
#include "json_error_position.h"
#include "problem_list.h"
#include "quoted_text.h"
#include "repeats.h"
#include "run_group.h"
#include "train/run_spec.h"
#include "train/spec_fields.h"

namespace scalelab {

namespace {

std::string quoted(const QString& s) {
    return quoted_text(s.toStdString(), '"');
}

// How a problem names the value it found, so that the user can find it in the file.
std::string describe_json_value(const QJsonValue& value) {
    switch (value.type()) {
        case QJsonValue::Null:
            return "null";
        case QJsonValue::Bool:
            return value.toBool() ? "true" : "false";
        case QJsonValue::Double:
            return QString::number(value.toDouble(), 'g', 17).toStdString();
        case QJsonValue::String:
            return "the string " + quoted(value.toString());
        case QJsonValue::Array:
            return "an array";
        case QJsonValue::Object:
            return "an object";
        case QJsonValue::Undefined:
            break;
    }
    return "nothing";
}

std::string wrong(const char* key, const std::string& expected, const QJsonValue& got) {
    return std::string("\"") + key + "\" must be " + expected + ", got " + describe_json_value(got);
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
    std::string out;
    for (const auto& item : items)
        out += (out.empty() ? "" : separator) + item;
    return out;
}

// Refuses a document that gives a key twice: which value it meant is a guess.
void refuse_duplicate_keys(const QByteArray& document) {
    const auto twice = find_duplicate_json_key(
        std::string_view(document.constData(), std::size_t(document.size())));
    if (twice)
        throw Error(ErrorKind::InvalidSpec, "line " + std::to_string(twice->line) + ", column " +
                                                std::to_string(twice->column) + ": key " +
                                                quoted_text(twice->path) +
                                                " is given twice (first at line " +
                                                std::to_string(twice->first_line) + "); keep one");
}

bool is_whole_number_in(const QJsonValue& value, double low, double high) {
    if (!value.isDouble())
        return false;
    const double v = value.toDouble();
    return std::floor(v) == v && v >= low && v <= high;
}

// Writers: one per field type.
QJsonValue to_json(const std::string& v) {
    return QString::fromStdString(v);
}
QJsonValue to_json(int v) {
    return v;
}
QJsonValue to_json(double v) {
    return v;
}
QJsonValue to_json(bool v) {
    return v;
}
// Every enum as its name ("cosine", "per-epoch").
template <typename Enum>
requires std::is_enum_v<Enum> QJsonValue to_json(Enum v) {
    const std::string_view name = to_string(v);
    return QString::fromUtf8(name.data(), qsizetype(name.size()));
}
QJsonValue to_json(const std::vector<int>& v) {
    QJsonArray array;
    for (int x : v)
        array.append(x);
    return array;
}
QJsonValue to_json(const std::vector<double>& v) {
    QJsonArray array;
    for (double x : v)
        array.append(x);
    return array;
}
// JSON numbers are exact only up to the int64 range Qt keeps integers in; a larger seed is
// written as a decimal string so that it reads back unchanged.
QJsonValue to_json(std::uint64_t v) {
    if (v <= std::uint64_t(std::numeric_limits<qint64>::max()))
        return qint64(v);
    return QString::number(v);
}

// Readers: one per field type. Each returns what is wrong with the value, or "" when it fits.
std::string from_json(const char* key, const QJsonValue& value, std::string& out) {
    if (!value.isString())
        return wrong(key, "a string", value);
    out = value.toString().toStdString();
    return {};
}

std::string from_json(const char* key, const QJsonValue& value, int& out) {
    constexpr double low = std::numeric_limits<int>::min(), high = std::numeric_limits<int>::max();
    if (!is_whole_number_in(value, low, high))
        return wrong(key, "a whole number", value);
    out = value.toInt();
    return {};
}

std::string from_json(const char* key, const QJsonValue& value, double& out) {
    if (!value.isDouble())
        return wrong(key, "a number", value);
    out = value.toDouble();
    return {};
}

std::string from_json(const char* key, const QJsonValue& value, bool& out) {
    if (!value.isBool())
        return wrong(key, "true or false", value);
    out = value.toBool();
    return {};
}

std::string from_json(const char* key, const QJsonValue& value, std::uint64_t& out) {
    constexpr const char* expected = "a whole number from 0 to 18446744073709551615";
    if (value.isString()) {
        bool ok = false;
        const qulonglong parsed = value.toString().toULongLong(&ok);
        if (!ok)
            return wrong(key, expected, value);
        out = parsed;
        return {};
    }
    // double(qint64 max) is 2^63, which toInteger() cannot convert: it returns the default.
    const qint64 whole = value.toInteger(-1);
    if (!is_whole_number_in(value, 0, double(std::numeric_limits<qint64>::max())) || whole < 0)
        return wrong(key, std::string(expected) + " (write seeds above 2^63 as a string)", value);
    out = std::uint64_t(whole);
    return {};
}

std::string from_json(const char* key, const QJsonValue& value, std::vector<int>& out) {
    const std::string expected =
        std::string("an array of whole numbers (") +
        (std::string_view(key) == "gpus" ? "GPU indices, e.g. [0, 1]" : "epochs, e.g. [30, 60]") +
        ")";
    if (!value.isArray())
        return wrong(key, expected, value);
    std::vector<int> parsed;
    for (const QJsonValue& item : value.toArray()) {
        int epoch = 0;
        if (!from_json(key, item, epoch).empty())
            return wrong(key, expected, item);
        parsed.push_back(epoch);
    }
    out = std::move(parsed);
    return {};
}

std::string from_json(const char* key, const QJsonValue& value, std::vector<double>& out) {
    constexpr const char* expected = "an array of numbers (e.g. [0.85, 0.9])";
    if (!value.isArray())
        return wrong(key, expected, value);
    std::vector<double> parsed;
    for (const QJsonValue& item : value.toArray()) {
        if (!item.isDouble())
            return wrong(key, expected, item);
        parsed.push_back(item.toDouble());
    }
    out = std::move(parsed);
    return {};
}

// Every enum from its name; anything else is a problem listing the names.
template <typename Enum>
requires std::is_enum_v<Enum> std::string from_json(const char* key, const QJsonValue& value,
                                                    Enum& out) {
    const auto parsed = value.isString()
                            ? EnumNames<Enum>::table.parse(value.toString().toStdString())
                            : std::nullopt;
    if (!parsed)
        return wrong(key, "one of " + EnumNames<Enum>::table.choices(", ", "\""), value);
    out = *parsed;
    return {};
}

// The field's value as JSON, and the field read from JSON (spec_fields.h: one entry per field,
// so that writing, reading and the list of keys cannot disagree).
QJsonValue field_to_json(const SpecField& field, const RunSpec& spec) {
    return std::visit([&spec](auto member) { return to_json(spec.*member); }, field.member);
}

std::string field_from_json(const SpecField& field, const QJsonValue& value, RunSpec& spec) {
    const std::string key(field.key);
    return std::visit([&](auto member) { return from_json(key.c_str(), value, spec.*member); },
                      field.member);
}

// Reads "repeats" into `repeats`; returns what is wrong with it, or "" when it was read.
std::string read_repeats(const QJsonValue& value, int& repeats) {
    const QString key = QStringLiteral("\"repeats\"");
    if (!is_whole_number_in(value, std::numeric_limits<int>::min(),
                            std::numeric_limits<int>::max()))
        return wrong("repeats", "a whole number from 1 to " + std::to_string(most_repeats), value);
    repeats = value.toInt();
    return repeats_problem(key, repeats).toStdString();
}

// The document as a spec on top of `defaults`; with `repeats`, an experiment file's "repeats"
// too.
RunSpec read_document(const QByteArray& document, const RunSpec& defaults, int* repeats) {
    QJsonParseError parse_error;
    const QJsonDocument json = QJsonDocument::fromJson(document, &parse_error);
    if (parse_error.error != QJsonParseError::NoError)
        throw Error(ErrorKind::InvalidSpec,
                    "invalid JSON at " +
                        json_error_position(document, parse_error.offset).toStdString() + ": " +
                        parse_error.errorString().toStdString());
    if (!json.isObject())
        throw Error(ErrorKind::InvalidSpec,
                    "a run spec must be a JSON object ({\"model\": \"cnn\", ...}), not an array "
                    "or a single value");
    refuse_duplicate_keys(document);

    RunSpec spec = defaults;
    ProblemList problems;
    QStringList keys = run_spec_json_keys();
    if (repeats)
        keys.append(QStringLiteral("repeats"));
    const std::string valid_keys = keys.join(", ").toStdString();
    const QJsonObject object = json.object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        if (repeats && it.key() == QLatin1String("repeats")) {
            if (std::string problem = read_repeats(it.value(), *repeats); !problem.empty())
                problems.add(std::move(problem));
            continue;
        }
        const SpecField* field = find_spec_field(it.key().toStdString());
        if (!field) {
            problems.add("unknown key " + quoted(it.key()) + ": valid keys are " + valid_keys);
            continue;
        }
        if (std::string problem = field_from_json(*field, it.value(), spec); !problem.empty())
            problems.add(std::move(problem));
    }
    if (repeats && problems.empty())
        if (const QString problem =
                repeats_problem(QStringLiteral("\"repeats\""), *repeats, spec.seed);
            !problem.isEmpty())
            problems.add(problem.toStdString());
    if (!problems.empty())
        throw Error(ErrorKind::InvalidSpec, join(problems.lines(), "\n"));
    return spec;
}

}  // namespace

QJsonObject run_spec_to_json(const RunSpec& spec) {
    QJsonObject object;
    for (const SpecField& field : spec_fields())
        object.insert(QString::fromUtf8(field.key.data(), qsizetype(field.key.size())),
                      field_to_json(field, spec));
    return object;
}

RunSpec run_spec_from_json(const QByteArray& document, const RunSpec& defaults) {
    return read_document(document, defaults, nullptr);
}

QJsonObject experiment_to_json(const Experiment& experiment) {
    QJsonObject object = run_spec_to_json(experiment.spec);
    if (experiment.repeats > 1)
        object.insert(QStringLiteral("repeats"), experiment.repeats);
    return object;
}

Experiment experiment_from_json(const QByteArray& document, const RunSpec& defaults) {
    Experiment experiment;
    experiment.spec = read_document(document, defaults, &experiment.repeats);
    return experiment;
}

QStringList run_spec_json_keys() {
    QStringList keys;
    for (const SpecField& field : spec_fields())
        keys.append(QString::fromUtf8(field.key.data(), qsizetype(field.key.size())));
    return keys;
}

}  // namespace scalelab
