#include "run_spec_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonParseError>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "error.h"
#include "json_duplicate_key.h"
#include "json_error_position.h"
#include "problem_list.h"
#include "quoted_text.h"
#include "train/run_spec.h"

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

// One entry per RunSpec field, so that writing, reading and the list of keys cannot disagree.
struct Field {
    const char* key;
    std::function<QJsonValue(const RunSpec&)> write;
    std::function<std::string(const QJsonValue&, RunSpec&)> read;
};

template <typename T>
Field field(const char* key, T RunSpec::*member) {
    return {key, [member](const RunSpec& spec) { return to_json(spec.*member); },
            [key, member](const QJsonValue& value, RunSpec& spec) {
                return from_json(key, value, spec.*member);
            }};
}

const std::vector<Field>& fields() {
    static const std::vector<Field> all{
        field("model", &RunSpec::model),
        field("width", &RunSpec::width),
        field("dataset", &RunSpec::dataset),
        field("data_dir", &RunSpec::data_dir),
        field("synthetic_train", &RunSpec::synthetic_train),
        field("synthetic_test", &RunSpec::synthetic_test),
        field("synthetic_channels", &RunSpec::synthetic_channels),
        field("synthetic_size", &RunSpec::synthetic_size),
        field("augment", &RunSpec::augment),
        field("train_subset", &RunSpec::train_subset),
        field("test_subset", &RunSpec::test_subset),
        field("epochs", &RunSpec::epochs),
        field("batch", &RunSpec::batch),
        field("device", &RunSpec::device),
        field("devices", &RunSpec::devices),
        field("gpus", &RunSpec::gpus),
        field("tf32", &RunSpec::tf32),
        field("deterministic", &RunSpec::deterministic),
        field("collective_timeout_s", &RunSpec::collective_timeout_s),
        field("accumulation", &RunSpec::accumulation),
        field("bucket_mb", &RunSpec::bucket_mb),
        field("first_bucket_mb", &RunSpec::first_bucket_mb),
        field("overlap", &RunSpec::overlap),
        field("sync_bn", &RunSpec::sync_bn),
        field("zero_init_residual", &RunSpec::zero_init_residual),
        field("ghost_batch", &RunSpec::ghost_batch),
        field("noise_scale_beta", &RunSpec::noise_scale_beta),
        field("targets", &RunSpec::targets),
        field("optimizer", &RunSpec::optimizer),
        field("lr", &RunSpec::lr),
        field("lr_scaling", &RunSpec::lr_scaling),
        field("reference_batch", &RunSpec::reference_batch),
        field("momentum", &RunSpec::momentum),
        field("nesterov", &RunSpec::nesterov),
        field("weight_decay", &RunSpec::weight_decay),
        field("decay_norm_and_bias", &RunSpec::decay_norm_and_bias),
        field("label_smoothing", &RunSpec::label_smoothing),
        field("beta1", &RunSpec::beta1),
        field("beta2", &RunSpec::beta2),
        field("eps", &RunSpec::eps),
        field("trust_coefficient", &RunSpec::trust_coefficient),
        field("larc", &RunSpec::larc),
        field("trust_clamp", &RunSpec::trust_clamp),
        field("grad_averaging", &RunSpec::grad_averaging),
        field("adapt_norm_and_bias", &RunSpec::adapt_norm_and_bias),
        field("schedule", &RunSpec::schedule),
        field("gamma", &RunSpec::gamma),
        field("step_epochs", &RunSpec::step_epochs),
        field("milestones", &RunSpec::milestones),
        field("min_lr", &RunSpec::min_lr),
        field("poly_power", &RunSpec::poly_power),
        field("warmup", &RunSpec::warmup),
        field("warmup_length", &RunSpec::warmup_length),
        field("warmup_unit", &RunSpec::warmup_unit),
        field("warmup_start_factor", &RunSpec::warmup_start_factor),
        field("seed", &RunSpec::seed),
        field("threads", &RunSpec::threads),
        field("target_accuracy", &RunSpec::target_accuracy),
        field("patience", &RunSpec::patience),
    };
    return all;
}

const Field* find_field(const QString& key) {
    for (const Field& f : fields())
        if (key == QLatin1String(f.key))
            return &f;
    return nullptr;
}

}  // namespace

QJsonObject run_spec_to_json(const RunSpec& spec) {
    QJsonObject object;
    for (const Field& f : fields())
        object.insert(QLatin1String(f.key), f.write(spec));
    return object;
}

RunSpec run_spec_from_json(const QByteArray& document, const RunSpec& defaults) {
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
    const std::string valid_keys = run_spec_json_keys().join(", ").toStdString();
    const QJsonObject object = json.object();
    for (auto it = object.begin(); it != object.end(); ++it) {
        const Field* f = find_field(it.key());
        if (!f) {
            problems.add("unknown key " + quoted(it.key()) + ": valid keys are " + valid_keys);
            continue;
        }
        if (std::string problem = f->read(it.value(), spec); !problem.empty())
            problems.add(std::move(problem));
    }
    if (!problems.empty())
        throw Error(ErrorKind::InvalidSpec, join(problems.lines(), "\n"));
    return spec;
}

QStringList run_spec_json_keys() {
    QStringList keys;
    for (const Field& f : fields())
        keys.append(QLatin1String(f.key));
    return keys;
}

}  // namespace scalelab
