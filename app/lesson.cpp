#include "lesson.h"

#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonParseError>
#include <QRegularExpression>
#include <QSet>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "data/load.h"
#include "error.h"
#include "json_duplicate_key.h"
#include "json_error_position.h"
#include "name_table.h"
#include "problem_list.h"
#include "quoted_text.h"
#include "repeats.h"
#include "run_collection.h"
#include "run_group.h"
#include "run_spec_json.h"
#include "train/dataset_request.h"
#include "train/metrics.h"

namespace scalelab {

namespace {

constexpr NameTable<LessonChart, 8> chart_names{{{
    {LessonChart::TrainLoss, "train_loss"},
    {LessonChart::ValAccuracy, "val_accuracy"},
    {LessonChart::ImagesPerSecond, "images_per_s"},
    {LessonChart::LearningRate, "learning_rate"},
    {LessonChart::NoiseScale, "noise_scale"},
    {LessonChart::Scaling, "scaling"},
    {LessonChart::StepsToTarget, "steps_to_target"},
    {LessonChart::TimeBreakdown, "time_breakdown"},
}}};
constexpr NameTable<LessonAxis, 4> axis_names{{{
    {LessonAxis::Step, "step"},
    {LessonAxis::Epoch, "epoch"},
    {LessonAxis::Samples, "samples"},
    {LessonAxis::Time, "time"},
}}};

// "\"step\", \"epoch\", ..." for messages.
template <typename Enum, std::size_t N>
QString choices(const NameTable<Enum, N>& names) {
    return QString::fromStdString(names.choices(", ", "\""));
}

// The top-level keys of a lesson file, and those of its nested objects besides RunSpec fields.
const QStringList lesson_keys{
    QStringLiteral("title"),  QStringLiteral("explanation"), QStringLiteral("charts"),
    QStringLiteral("x_axis"), QStringLiteral("base"),        QStringLiteral("runs"),
    QStringLiteral("gpu"),    QStringLiteral("assessment"),  QStringLiteral("expect")};
const QStringList gpu_keys{QStringLiteral("base"), QStringLiteral("assessment")};
const QStringList assessment_keys{QStringLiteral("target"), QStringLiteral("consecutive_epochs"),
                                  QStringLiteral("time_budget_s")};

// LessonSize::Test: small enough that all shipped lessons train in seconds.
constexpr int test_train_images = 256;
constexpr int test_test_images = 128;
constexpr int test_max_epochs = 2;
// A lesson whose global batches are larger than a sixth of this trains its test runs for fewer
// steps than the steady images/s leaves out.
constexpr int test_most_train_images = 1 << 16;
// Two seeds still make a group with a spread, which is what tests of repeats need.
constexpr int test_max_repeats = 2;

QString child(const QString& path, const QString& key) {
    return path.isEmpty() ? key : path + u'.' + key;
}

// A text of the file (a key, a run's name) as a problem quotes it: see quoted_text().
QString quoted_for_problem(const QString& text, char quote = '\'') {
    return QString::fromStdString(quoted_text(text.toStdString(), quote));
}

// "\"a\", \"b\"": the lesson's run names, each quoted.
QString quoted_list(const QStringList& names) {
    QStringList quoted_names;
    for (const QString& name : names)
        quoted_names.append(quoted_for_problem(name, '"'));
    return quoted_names.join(QStringLiteral(", "));
}

QString element(const QString& path, qsizetype index) {
    return QStringLiteral("%1[%2]").arg(path).arg(index);
}

// The line of every key of a valid JSON document, by its path ("runs[2].batch"), and of the
// start of every array element ("runs[2]"). QJsonDocument keeps no positions, and a message
// that names the line to fix is worth this small scanner.
class KeyLines {
  public:
    explicit KeyLines(const QByteArray& json) {
        struct Frame {
            bool object = true;
            QString path;
            QString key;
            int index = 0;
            bool expect_key = true;
        };
        std::vector<Frame> frames;
        int line = 1;
        const auto here = [&frames]() -> QString {
            if (frames.empty())
                return {};
            const Frame& top = frames.back();
            return top.object ? child(top.path, top.key) : element(top.path, top.index);
        };
        const auto value_starts = [&] {
            if (!frames.empty() && !frames.back().object)
                lines_.insert(here(), line);
        };
        for (qsizetype i = 0; i < json.size(); ++i) {
            const char c = json[i];
            switch (c) {
                case '\n':
                    ++line;
                    break;
                case '"': {
                    const qsizetype start = i + 1;
                    for (++i; i < json.size() && json[i] != '"'; ++i)
                        if (json[i] == '\\')
                            ++i;
                    if (!frames.empty() && frames.back().object && frames.back().expect_key) {
                        frames.back().key = QString::fromUtf8(json.mid(start, i - start));
                        frames.back().expect_key = false;
                        lines_.insert(here(), line);
                    } else {
                        value_starts();
                    }
                    break;
                }
                case '{':
                case '[': {
                    value_starts();
                    Frame frame;
                    frame.object = c == '{';
                    frame.path = here();
                    frames.push_back(std::move(frame));
                    break;
                }
                case '}':
                case ']':
                    if (!frames.empty())
                        frames.pop_back();
                    break;
                case ',':
                    if (!frames.empty()) {
                        Frame& top = frames.back();
                        if (top.object)
                            top.expect_key = true;
                        else
                            ++top.index;
                    }
                    break;
                case ' ':
                case '\t':
                case '\r':
                case ':':
                    break;
                default:  // a number, true, false or null
                    value_starts();
                    break;
            }
        }
    }

    // 0 when the path is not in the document.
    int line(const QString& path) const { return lines_.value(path, 0); }

  private:
    QHash<QString, int> lines_;
};

// A lesson run's "repeats" and the field that set it ("runs[2].repeats", "base.repeats"; empty
// for the default).
struct LessonRepeats {
    int count = 1;
    QString path;
};

// One object of RunSpec fields and where it sits in the file ("base", "runs[1]").
struct SpecBlock {
    QString path;
    QJsonObject fields;
};

// The first RunSpec field a validate() message names (as a whole word), or "".
QString field_named_in(const QString& message) {
    // One pattern per key, compiled once: messages are matched against every key.
    static const std::vector<std::pair<QString, QRegularExpression>> words = [] {
        std::vector<std::pair<QString, QRegularExpression>> all;
        for (const QString& key : run_spec_json_keys())
            all.emplace_back(key, QRegularExpression(QStringLiteral("\\b%1\\b").arg(key)));
        return all;
    }();
    QString first;
    qsizetype first_at = message.size();
    for (const auto& [key, word] : words) {
        const QRegularExpressionMatch match = word.match(message);
        if (match.hasMatch() && match.capturedStart() < first_at) {
            first = key;
            first_at = match.capturedStart();
        }
    }
    return first;
}

// How the lesson note describes a setting: "fashion-mnist (first 20000 training images), cnn,
// 2 CPU devices".
QString describe_setting(const RunSpec& spec, bool gpus) {
    QString text = QString::fromStdString(spec.dataset);
    if (spec.train_subset > 0)
        text += QStringLiteral(" (first %1 training images)").arg(spec.train_subset);
    const QString unit = gpus ? QStringLiteral("GPU") : QStringLiteral("CPU device");
    return text + QStringLiteral(", %1, %2 %3%4")
                      .arg(QString::fromStdString(spec.model))
                      .arg(spec.devices)
                      .arg(unit, spec.devices == 1 ? QString() : QStringLiteral("s"));
}

// The training images each run of a lesson gets at LessonSize::Test: enough for every run to
// train past the warm-up steps its steady images/s leaves out, over the epochs it keeps (without
// that figure a lesson compares no throughput); the same for all, so that they still differ
// only where the lesson says.
int test_train_images_for(const std::vector<LessonRun>& runs) {
    double images = test_train_images;
    for (const LessonRun& run : runs) {
        // The specs are not validated yet: out-of-range values must not divide by 0 or overflow
        // here (validation reports them).
        const int epochs = std::clamp(run.spec.epochs, 1, test_max_epochs);
        const int steps_per_epoch = int(steady_warmup_steps + epochs) / epochs;
        const double global_batch =
            double(run.spec.devices) * run.spec.batch * run.spec.accumulation;
        images = std::max(images, global_batch * steps_per_epoch);
    }
    return int(std::min(images, double(test_most_train_images)));
}

void shrink_for_tests(RunSpec& spec, int train_images) {
    spec.dataset = "synthetic";
    spec.data_dir.clear();
    spec.synthetic_train = train_images;
    spec.synthetic_test = test_test_images;
    spec.synthetic_channels = 1;
    spec.synthetic_size = 28;
    spec.train_subset = 0;
    spec.test_subset = 0;
    if (spec.epochs > test_max_epochs) {
        if (spec.warmup_unit == WarmupUnit::Epochs)
            spec.warmup_length *= double(test_max_epochs) / spec.epochs;
        spec.epochs = test_max_epochs;
    }
}

// Reads one lesson document, collecting every problem with its file, line and field.
class LessonReader {
  public:
    LessonReader(const QByteArray& json, const QString& file) : file_(file), lines_(json) {}

    Lesson read(const QJsonObject& root, const DeviceInventory& devices, LessonSize size);

    // Throws LessonError with every problem found, one per line.
    void throw_if_problems() const {
        if (problems_.empty())
            return;
        std::string lines;
        for (const std::string& line : problems_.lines(file_.toStdString() + ": "))
            lines += (lines.empty() ? "" : "\n") + line;
        throw LessonError(lines);
    }

  private:
    // A problem with the value at `path`, or with the object at `path` when the problem is a
    // key it lacks. Problems repeated (a base field every run inherits) are reported once.
    void problem(const QString& path, const QString& text) {
        const int line = lines_.line(path);
        QString where = line > 0 ? QStringLiteral("%1:%2: ").arg(file_).arg(line)
                                 : QStringLiteral("%1: ").arg(file_);
        if (!path.isEmpty())
            where += QStringLiteral("field %1: ").arg(quoted_for_problem(path));
        if (!seen_.contains(where + text)) {
            seen_.insert(where + text);
            problems_.add((where + text).toStdString());
        }
    }

    void check_keys(const QJsonObject& object, const QString& path, const QStringList& allowed) {
        for (auto it = object.begin(); it != object.end(); ++it)
            if (!allowed.contains(it.key()))
                problem(child(path, it.key()),
                        QStringLiteral("unknown key: %1 takes %2")
                            .arg(path.isEmpty() ? QStringLiteral("a lesson") : path,
                                 allowed.join(QStringLiteral(", "))));
    }

    QString required_text(const QJsonObject& object, const QString& key, const QString& what) {
        const QJsonValue value = object.value(key);
        if (value.isUndefined())
            problem({}, QStringLiteral("the lesson needs a \"%1\": %2").arg(key, what));
        else if (!value.isString() || value.toString().trimmed().isEmpty())
            problem(key, QStringLiteral("must be a non-empty string: %1").arg(what));
        return value.toString().trimmed();
    }

    QJsonObject optional_object(const QJsonObject& parent, const QString& key, const QString& path,
                                const QString& what) {
        const QJsonValue value = parent.value(key);
        if (!value.isUndefined() && !value.isObject())
            problem(path, QStringLiteral("must be an object: %1").arg(what));
        return value.toObject();
    }

    // The lesson's settings: the run fields every run inherits ("base"), and the GPU setting's
    // ("gpu": its own base and assessment), used where GPUs and its data are found.
    struct Settings {
        SpecBlock base;
        LessonRepeats repeats;  // base's "repeats", which each run may override
        bool has_gpu_block = false;
        SpecBlock gpu_base;
        std::optional<Assessment> laptop_assessment, gpu_assessment;
    };
    // One entry of "runs": its name, where it sits, and its fields without the name.
    struct RunEntry {
        QString name;
        QString path;
        QJsonObject fields;
        LessonRepeats repeats;
    };
    // Each run's spec as the laptop and as the GPU setting define it (gpu: empty without a
    // "gpu" block), in the order of "runs".
    struct SettingSpecs {
        std::vector<RunSpec> laptop, gpu;
    };

    // The title, the explanation, the charts and their x axis.
    void read_header(const QJsonObject& root, Lesson& lesson);
    Settings read_settings(const QJsonObject& root);
    // Every run that is an object, each name checked (present, a non-empty string, unique), its
    // repeats its own or else `base_repeats`.
    std::vector<RunEntry> read_runs(const QJsonObject& root, const LessonRepeats& base_repeats);
    // Takes "repeats" out of the RunSpec fields of the object at `path` (it is not a RunSpec
    // field); `fallback` when absent or wrong (a problem then says so).
    LessonRepeats take_repeats(QJsonObject& fields, const QString& path,
                               const LessonRepeats& fallback);
    // Both settings' specs of every run, each checked with validate(): both must be valid,
    // whichever this machine will use.
    SettingSpecs build_setting_specs(const std::vector<RunEntry>& runs, const Settings& settings);
    // Why this machine cannot use the GPU setting: no GPU, its data missing (CIFAR-10 is in a
    // folder the user names), or fewer GPUs than it needs; empty when it can.
    static QString why_not_gpu_setting(const std::vector<RunSpec>& gpu_specs,
                                       const DeviceInventory& devices);
    // Lesson::setting_note for the setting chosen (the first run's specs describe it).
    static QString setting_note(const std::vector<RunSpec>& chosen, bool use_gpu,
                                const QString& why_not);
    // The runs as the chosen setting makes them: the assessment's early stop applied, and
    // shrunk for tests when asked.
    std::vector<LessonRun> chosen_runs(const std::vector<RunEntry>& runs, const Settings& settings,
                                       const std::vector<RunSpec>& chosen, bool use_gpu,
                                       const std::optional<Assessment>& assessment,
                                       LessonSize size);

    std::vector<LessonChart> read_charts(const QJsonObject& root);
    LessonAxis read_axis(const QJsonObject& root);
    std::optional<Assessment> read_assessment(const QJsonObject& parent, const QString& path);
    std::vector<LessonClaim> read_claims(const QJsonObject& root, const QStringList& run_names);
    std::optional<LessonClaim> read_claim(const QJsonObject& object, const QString& path,
                                          const QStringList& run_names);
    // The index of the run named by the string at `path`; -1 (and a problem) when there is none.
    int run_index(const QJsonValue& value, const QString& path, const QStringList& run_names);
    // The number at `path`, which must lie in [low, high]; `fallback` when absent or wrong
    // (a problem then says so).
    double claim_number(const QJsonObject& object, const QString& key, const QString& path,
                        double fallback, double low, double high);
    // A whole epoch from `low` on, the same way.
    int claim_epoch(const QJsonObject& object, const QString& key, const QString& path,
                    int fallback, int low);
    // The spec the blocks make, applied in order over the defaults, each field checked on its
    // own so that a problem names the field's line.
    RunSpec build_spec(const std::vector<SpecBlock>& blocks);
    // Reports each of spec.validate()'s problems at the block that set the field it names (the
    // last one), or at the run when no block did.
    void validate(const RunSpec& spec, const std::vector<SpecBlock>& blocks,
                  const QString& run_path);
    // Sets the runs' early stop from the assessment; a block that sets it itself is a problem.
    void apply_assessment(const Assessment& assessment, RunSpec& spec,
                          const std::vector<SpecBlock>& blocks, const QString& run_path);

    QString file_;
    KeyLines lines_;
    QSet<QString> seen_;  // every problem reported, so that a repeated one is not counted again
    ProblemList problems_;
};

std::vector<LessonChart> LessonReader::read_charts(const QJsonObject& root) {
    const QString what =
        QStringLiteral("an array of chart names, each one of %1").arg(choices(chart_names));
    const QJsonValue value = root.value(QStringLiteral("charts"));
    if (value.isUndefined()) {
        problem({}, QStringLiteral("the lesson needs \"charts\": %1").arg(what));
        return {};
    }
    if (!value.isArray() || value.toArray().isEmpty()) {
        problem(QStringLiteral("charts"), QStringLiteral("must be %1").arg(what));
        return {};
    }
    std::vector<LessonChart> charts;
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const auto chart = chart_names.parse(array[i].toString().toStdString());
        if (!array[i].isString() || !chart)
            problem(element(QStringLiteral("charts"), i),
                    QStringLiteral("unknown chart: choose one of %1").arg(choices(chart_names)));
        else
            charts.push_back(*chart);
    }
    return charts;
}

LessonAxis LessonReader::read_axis(const QJsonObject& root) {
    const QJsonValue value = root.value(QStringLiteral("x_axis"));
    if (value.isUndefined())
        return LessonAxis::Step;
    const auto axis = axis_names.parse(value.toString().toStdString());
    if (!value.isString() || !axis) {
        problem(QStringLiteral("x_axis"),
                QStringLiteral("must be one of %1").arg(choices(axis_names)));
        return LessonAxis::Step;
    }
    return *axis;
}

std::optional<Assessment> LessonReader::read_assessment(const QJsonObject& parent,
                                                        const QString& path) {
    const QJsonValue value = parent.value(QStringLiteral("assessment"));
    if (value.isUndefined())
        return std::nullopt;
    const QString what = QStringLiteral(
        "{\"target\": 0.75, \"consecutive_epochs\": 2, \"time_budget_s\": 300}: the validation "
        "accuracy to hold for that many epochs in a row within that many seconds of training");
    if (!value.isObject()) {
        problem(path, QStringLiteral("must be an object %1").arg(what));
        return std::nullopt;
    }
    const QJsonObject object = value.toObject();
    check_keys(object, path, assessment_keys);
    for (const QString& key : assessment_keys)
        if (!object.contains(key))
            problem(path, QStringLiteral("needs \"%1\": %2").arg(key, what));

    Assessment assessment;
    const QJsonValue target = object.value(QStringLiteral("target"));
    assessment.target = target.toDouble();
    if (target.isDouble() ? !(assessment.target > 0 && assessment.target <= 1)
                          : !target.isUndefined())
        problem(child(path, QStringLiteral("target")),
                QStringLiteral("must be a validation accuracy in (0, 1], e.g. 0.75"));
    const QJsonValue epochs = object.value(QStringLiteral("consecutive_epochs"));
    assessment.consecutive_epochs = epochs.toInt();
    if (epochs.isDouble() ? !(epochs.toDouble() == assessment.consecutive_epochs &&
                              assessment.consecutive_epochs >= 1)
                          : !epochs.isUndefined())
        problem(child(path, QStringLiteral("consecutive_epochs")),
                QStringLiteral("must be a whole number of epochs, at least 1"));
    const QJsonValue budget = object.value(QStringLiteral("time_budget_s"));
    assessment.time_budget_s = budget.toDouble();
    if (budget.isDouble() ? !(assessment.time_budget_s > 0) : !budget.isUndefined())
        problem(child(path, QStringLiteral("time_budget_s")),
                QStringLiteral("must be a number of seconds above 0, e.g. 300"));
    return assessment;
}

int LessonReader::run_index(const QJsonValue& value, const QString& path,
                            const QStringList& run_names) {
    const int index = int(run_names.indexOf(value.toString()));
    if (!value.isString() || index < 0)
        problem(path, QStringLiteral("unknown run: name one of the lesson's runs, %1")
                          .arg(quoted_list(run_names)));
    return index;
}

double LessonReader::claim_number(const QJsonObject& object, const QString& key,
                                  const QString& path, double fallback, double low, double high) {
    const QJsonValue value = object.value(key);
    if (value.isUndefined())
        return fallback;
    if (!value.isDouble() || !(value.toDouble() >= low && value.toDouble() <= high)) {
        const bool unbounded = high == std::numeric_limits<double>::max();
        problem(child(path, key),
                unbounded ? QStringLiteral("must be a number from %1 up").arg(low, 0, 'g', 12)
                          : QStringLiteral("must be a number from %1 to %2")
                                .arg(low, 0, 'g', 12)
                                .arg(high, 0, 'g', 12));
        return fallback;
    }
    return value.toDouble();
}

int LessonReader::claim_epoch(const QJsonObject& object, const QString& key, const QString& path,
                              int fallback, int low) {
    const double epoch = claim_number(object, key, path, fallback, low, 1000000);
    if (epoch != std::floor(epoch)) {
        problem(child(path, key), QStringLiteral("must be a whole epoch"));
        return fallback;
    }
    return int(epoch);
}

std::optional<LessonClaim> LessonReader::read_claim(const QJsonObject& object, const QString& path,
                                                    const QStringList& run_names) {
    static const QStringList keys{"claim",       "metric",     "run",      "within",  "of",
                                  "better_than", "by",         "at_least", "at_most", "rises_over",
                                  "tolerance",   "from_epoch", "to_epoch"};
    check_keys(object, path, keys);
    LessonClaim claim;
    claim.text = object.value(QStringLiteral("claim")).toString().trimmed();
    if (claim.text.isEmpty())
        problem(path, QStringLiteral("needs a \"claim\": what the lesson says, in words"));
    const QString metric_path = child(path, QStringLiteral("metric"));
    const auto metric = EnumNames<ClaimMetric>::table.parse(
        object.value(QStringLiteral("metric")).toString().toStdString());
    if (!metric)
        problem(object.contains(QStringLiteral("metric")) ? metric_path : path,
                QStringLiteral("unknown metric: choose one of %1")
                    .arg(choices(EnumNames<ClaimMetric>::table)));
    claim.metric = metric.value_or(ClaimMetric::FinalTrainLoss);

    using enum ClaimRelation;
    const std::vector<std::pair<const char*, ClaimRelation>> relations{{"within", Within},
                                                                       {"better_than", BetterThan},
                                                                       {"at_least", AtLeast},
                                                                       {"at_most", AtMost},
                                                                       {"rises_over", RisesOver}};
    int given = 0;
    for (const auto& [key, relation] : relations)
        if (object.contains(QLatin1String(key))) {
            claim.relation = relation;
            ++given;
        }
    if (given != 1) {
        problem(path, QStringLiteral("needs exactly one of \"within\" (with \"of\"), "
                                     "\"better_than\", \"at_least\", \"at_most\", "
                                     "\"rises_over\""));
        return std::nullopt;
    }
    if (claim.relation == RisesOver) {
        const QJsonArray list = object.value(QStringLiteral("rises_over")).toArray();
        if (list.size() < 2)
            problem(child(path, QStringLiteral("rises_over")),
                    QStringLiteral("must list at least two runs, in the order the value rises"));
        for (qsizetype i = 0; i < list.size(); ++i)
            claim.runs.push_back(run_index(
                list[i], element(child(path, QStringLiteral("rises_over")), i), run_names));
        claim.value = claim_number(object, QStringLiteral("tolerance"), path, 0, 0, 1);
    } else {
        if (!object.contains(QStringLiteral("run")))
            problem(path, QStringLiteral("needs the \"run\" the claim is about"));
        else
            claim.runs.push_back(run_index(object.value(QStringLiteral("run")),
                                           child(path, QStringLiteral("run")), run_names));
    }
    const double largest = std::numeric_limits<double>::max();
    switch (claim.relation) {
        case Within:
            claim.value = claim_number(object, QStringLiteral("within"), path, 0, 0, largest);
            if (!object.contains(QStringLiteral("of")))
                problem(path, QStringLiteral("\"within\" needs \"of\": the run to compare with"));
            else
                claim.runs.push_back(run_index(object.value(QStringLiteral("of")),
                                               child(path, QStringLiteral("of")), run_names));
            break;
        case BetterThan:
            claim.runs.push_back(run_index(object.value(QStringLiteral("better_than")),
                                           child(path, QStringLiteral("better_than")), run_names));
            claim.value = claim_number(object, QStringLiteral("by"), path, 0, 0, largest);
            break;
        case AtLeast:
        case AtMost: {
            const QString key =
                claim.relation == AtLeast ? QStringLiteral("at_least") : QStringLiteral("at_most");
            claim.value = claim_number(object, key, path, 0, -largest, largest);
            break;
        }
        case RisesOver:
            break;
    }
    // The key that goes with the relation, besides its own.
    const QLatin1String companion(claim.relation == Within       ? "of"
                                  : claim.relation == BetterThan ? "by"
                                  : claim.relation == RisesOver  ? "tolerance"
                                                                 : "");
    for (const char* key : {"of", "by", "tolerance"})
        if (object.contains(QLatin1String(key)) && companion != QLatin1String(key))
            problem(child(path, QLatin1String(key)),
                    QStringLiteral("does not go with this claim's relation: remove it"));
    claim.from_epoch = claim_epoch(object, QStringLiteral("from_epoch"), path, 1, 1);
    claim.to_epoch = claim_epoch(object, QStringLiteral("to_epoch"), path, 0, claim.from_epoch);
    const bool per_epoch = to_string(claim.metric).starts_with("epoch_");
    for (const QString& key : {QStringLiteral("from_epoch"), QStringLiteral("to_epoch")})
        if (object.contains(key) && !per_epoch)
            problem(child(path, key),
                    QStringLiteral("applies to the epoch_* metrics only: remove it"));
    for (int index : claim.runs)
        if (index < 0)
            return std::nullopt;
    return claim;
}

std::vector<LessonClaim> LessonReader::read_claims(const QJsonObject& root,
                                                   const QStringList& run_names) {
    const QJsonValue value = root.value(QStringLiteral("expect"));
    if (value.isUndefined())
        return {};
    if (!value.isArray()) {
        problem(QStringLiteral("expect"),
                QStringLiteral("must be an array of claims, each {\"claim\": ..., \"metric\": "
                               "..., \"run\": ..., and a relation}"));
        return {};
    }
    std::vector<LessonClaim> claims;
    const QJsonArray array = value.toArray();
    for (qsizetype i = 0; i < array.size(); ++i) {
        const QString path = element(QStringLiteral("expect"), i);
        if (!array[i].isObject()) {
            problem(path, QStringLiteral("must be an object: a claim"));
            continue;
        }
        if (std::optional<LessonClaim> claim = read_claim(array[i].toObject(), path, run_names))
            claims.push_back(std::move(*claim));
    }
    return claims;
}

RunSpec LessonReader::build_spec(const std::vector<SpecBlock>& blocks) {
    RunSpec spec;
    for (const SpecBlock& block : blocks) {
        for (auto it = block.fields.begin(); it != block.fields.end(); ++it) {
            // run_spec_from_json reads a document: one field per document ties each of its
            // problems to that field's line.
            const QJsonDocument one_field(QJsonObject{{it.key(), it.value()}});
            try {
                spec = run_spec_from_json(one_field.toJson(QJsonDocument::Compact), spec);
            } catch (const Error& error) {
                problem(child(block.path, it.key()), QString::fromUtf8(error.what()));
            }
        }
    }
    return spec;
}

void LessonReader::validate(const RunSpec& spec, const std::vector<SpecBlock>& blocks,
                            const QString& run_path) {
    for (const std::string& message : spec.validate()) {
        const QString text = QString::fromStdString(message);
        const QString field = field_named_in(text);
        QString path = run_path;
        for (auto block = blocks.rbegin(); block != blocks.rend(); ++block)
            if (!field.isEmpty() && block->fields.contains(field)) {
                path = child(block->path, field);
                break;
            }
        problem(path, text);
    }
}

void LessonReader::apply_assessment(const Assessment& assessment, RunSpec& spec,
                                    const std::vector<SpecBlock>& blocks, const QString& run_path) {
    for (const SpecBlock& block : blocks)
        for (const QString& key : {QStringLiteral("target_accuracy"), QStringLiteral("patience")})
            if (block.fields.contains(key))
                problem(child(block.path, key),
                        QStringLiteral("the assessment sets it (from its target and "
                                       "consecutive_epochs): remove it"));
    spec.target_accuracy = assessment.target;
    spec.patience = assessment.consecutive_epochs;
    if (spec.epochs < assessment.consecutive_epochs) {
        QString path = run_path;
        for (const SpecBlock& block : blocks)
            if (block.fields.contains(QStringLiteral("epochs")))
                path = child(block.path, QStringLiteral("epochs"));
        problem(path, QStringLiteral("the assessment needs %1 epochs in a row above its target: "
                                     "train at least %1 epochs")
                          .arg(assessment.consecutive_epochs));
    }
}

Lesson LessonReader::read(const QJsonObject& root, const DeviceInventory& devices,
                          LessonSize size) {
    Lesson lesson;
    lesson.file = file_;
    read_header(root, lesson);
    const Settings settings = read_settings(root);
    const std::vector<RunEntry> runs = read_runs(root, settings.repeats);
    const SettingSpecs specs = build_setting_specs(runs, settings);

    bool use_gpu = false;
    if (settings.has_gpu_block) {
        const QString why_not = why_not_gpu_setting(specs.gpu, devices);
        use_gpu = why_not.isEmpty();
        lesson.setting_note = setting_note(use_gpu ? specs.gpu : specs.laptop, use_gpu, why_not);
    }
    lesson.assessment =
        use_gpu && settings.gpu_assessment ? settings.gpu_assessment : settings.laptop_assessment;
    lesson.runs = chosen_runs(runs, settings, use_gpu ? specs.gpu : specs.laptop, use_gpu,
                              lesson.assessment, size);
    qsizetype queued = 0;
    for (const RunEntry& run : runs)
        queued += run.repeats.count;
    if (queued > most_runs_queued_at_once && qsizetype(runs.size()) <= most_runs_queued_at_once)
        problem(QStringLiteral("runs"),
                QStringLiteral("has %1 runs with their repeats; a lesson queues at most %2: use "
                               "fewer repeats, or split it into several lessons")
                    .arg(queued)
                    .arg(most_runs_queued_at_once));

    QStringList run_names;
    for (const RunEntry& run : runs)
        run_names.append(run.name);
    lesson.claims = read_claims(root, run_names);
    return lesson;
}

void LessonReader::read_header(const QJsonObject& root, Lesson& lesson) {
    check_keys(root, {}, lesson_keys);
    lesson.title = required_text(root, QStringLiteral("title"), QStringLiteral("the menu's name"));
    lesson.explanation = required_text(root, QStringLiteral("explanation"),
                                       QStringLiteral("a few sentences on what the charts show"));
    lesson.charts = read_charts(root);
    lesson.x_axis = read_axis(root);
}

LessonReader::Settings LessonReader::read_settings(const QJsonObject& root) {
    const QString fields_what = QStringLiteral("run settings, as in a train --config file");
    Settings settings;
    settings.base = {.path = QStringLiteral("base"),
                     .fields = optional_object(root, QStringLiteral("base"), QStringLiteral("base"),
                                               fields_what)};
    settings.repeats = take_repeats(settings.base.fields, settings.base.path, {});
    settings.has_gpu_block = root.contains(QStringLiteral("gpu"));
    const QJsonObject gpu =
        optional_object(root, QStringLiteral("gpu"), QStringLiteral("gpu"),
                        QStringLiteral("{\"base\": {...}, \"assessment\": {...}}, the setting "
                                       "used where GPUs are present"));
    check_keys(gpu, QStringLiteral("gpu"), gpu_keys);
    settings.gpu_base = {.path = QStringLiteral("gpu.base"),
                         .fields = optional_object(gpu, QStringLiteral("base"),
                                                   QStringLiteral("gpu.base"), fields_what)};
    settings.laptop_assessment = read_assessment(root, QStringLiteral("assessment"));
    settings.gpu_assessment = read_assessment(gpu, QStringLiteral("gpu.assessment"));
    return settings;
}

LessonRepeats LessonReader::take_repeats(QJsonObject& fields, const QString& path,
                                         const LessonRepeats& fallback) {
    const QJsonValue value = fields.take(QStringLiteral("repeats"));
    if (value.isUndefined())
        return fallback;
    const QString where = child(path, QStringLiteral("repeats"));
    const double number = value.toDouble();
    if (!value.isDouble() || number != std::floor(number)) {
        problem(where, QStringLiteral("must be a whole number from 1 to %1: the seeds to train "
                                      "the run over")
                           .arg(most_repeats));
        return fallback;
    }
    // Clamped only so that the message can quote a huge number; any number out of range is
    // refused.
    const auto count = static_cast<long long>(std::clamp(number, -1e15, 1e15));
    if (const QString wrong = repeats_problem(QStringLiteral("\"repeats\""), count);
        !wrong.isEmpty()) {
        problem(where, wrong);
        return fallback;
    }
    return {int(count), where};
}

std::vector<LessonReader::RunEntry> LessonReader::read_runs(const QJsonObject& root,
                                                            const LessonRepeats& base_repeats) {
    const QJsonValue runs = root.value(QStringLiteral("runs"));
    const QString runs_what =
        QStringLiteral("a non-empty array of runs, each {\"name\": \"...\", and run settings}");
    if (runs.isUndefined())
        problem({}, QStringLiteral("the lesson needs \"runs\": %1").arg(runs_what));
    else if (!runs.isArray() || runs.toArray().isEmpty())
        problem(QStringLiteral("runs"), QStringLiteral("must be %1").arg(runs_what));
    else if (runs.toArray().size() > most_runs_queued_at_once)
        problem(QStringLiteral("runs"),
                QStringLiteral("has %1 runs; a lesson queues at most %2: split it into several "
                               "lessons")
                    .arg(runs.toArray().size())
                    .arg(most_runs_queued_at_once));
    std::vector<RunEntry> entries;
    QSet<QString> names;
    const QJsonArray run_array =
        runs.toArray().size() > most_runs_queued_at_once ? QJsonArray() : runs.toArray();
    for (qsizetype i = 0; i < run_array.size(); ++i) {
        const QString path = element(QStringLiteral("runs"), i);
        if (!run_array[i].isObject()) {
            problem(path, QStringLiteral("must be an object: %1").arg(runs_what));
            continue;
        }
        QJsonObject fields = run_array[i].toObject();
        const QJsonValue name = fields.take(QStringLiteral("name"));
        const QString trimmed = name.toString().trimmed();
        if (name.isUndefined())
            problem(path, QStringLiteral("needs a \"name\", as the charts' legend shows it"));
        else if (!name.isString() || trimmed.isEmpty())
            problem(child(path, QStringLiteral("name")),
                    QStringLiteral("must be a non-empty string"));
        else if (names.contains(trimmed))
            problem(child(path, QStringLiteral("name")),
                    QStringLiteral("%1 names another run too: give each run its own name")
                        .arg(quoted_for_problem(trimmed, '"')));
        names.insert(trimmed);
        const LessonRepeats repeats = take_repeats(fields, path, base_repeats);
        entries.push_back({trimmed, path, fields, repeats});
    }
    return entries;
}

LessonReader::SettingSpecs LessonReader::build_setting_specs(const std::vector<RunEntry>& runs,
                                                             const Settings& settings) {
    SettingSpecs specs;
    for (const RunEntry& run : runs) {
        const std::vector<SpecBlock> laptop_blocks{settings.base, {run.path, run.fields}};
        specs.laptop.push_back(build_spec(laptop_blocks));
        validate(specs.laptop.back(), laptop_blocks, run.path);
        if (settings.has_gpu_block) {
            const std::vector<SpecBlock> gpu_blocks{
                settings.base, settings.gpu_base, {run.path, run.fields}};
            specs.gpu.push_back(build_spec(gpu_blocks));
            specs.gpu.back().device = DeviceKind::Gpu;  // the GPU setting runs on the GPUs
            validate(specs.gpu.back(), gpu_blocks, run.path);
        }
    }
    return specs;
}

QString LessonReader::why_not_gpu_setting(const std::vector<RunSpec>& gpu_specs,
                                          const DeviceInventory& devices) {
    if (devices.gpus.empty())
        return devices.no_gpu_reason.empty()
                   ? QStringLiteral("no GPU found")
                   : QStringLiteral("no GPU: %1")
                         .arg(QString::fromStdString(devices.no_gpu_reason));
    for (const RunSpec& spec : gpu_specs) {
        const std::string missing = data::dataset_folder_problem(dataset_request(spec));
        if (!missing.empty())
            return QStringLiteral(
                       "GPUs found, but not the GPU setting's data (%1): "
                       "set \"data_dir\" in gpu.base of a copy of the "
                       "lesson among your own lessons")
                .arg(QString::fromStdString(missing));
    }
    int most = 0;
    for (const RunSpec& spec : gpu_specs)
        most = std::max(most, spec.devices);
    if (std::size_t(most) > devices.gpus.size())
        return QStringLiteral("the GPU setting needs %1 GPUs, this machine has %2")
            .arg(most)
            .arg(devices.gpus.size());
    return {};
}

QString LessonReader::setting_note(const std::vector<RunSpec>& chosen, bool use_gpu,
                                   const QString& why_not) {
    if (chosen.empty())
        return {};
    return use_gpu ? QStringLiteral("GPU setting: %1").arg(describe_setting(chosen[0], true))
                   : QStringLiteral("laptop setting: %1; %2")
                         .arg(describe_setting(chosen[0], false), why_not);
}

std::vector<LessonRun> LessonReader::chosen_runs(const std::vector<RunEntry>& runs,
                                                 const Settings& settings,
                                                 const std::vector<RunSpec>& chosen, bool use_gpu,
                                                 const std::optional<Assessment>& assessment,
                                                 LessonSize size) {
    std::vector<LessonRun> lesson_runs;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const RunEntry& run = runs[i];
        RunSpec spec = chosen[i];
        std::vector<SpecBlock> blocks{settings.base, {run.path, run.fields}};
        if (use_gpu)
            blocks.insert(blocks.begin() + 1, settings.gpu_base);
        if (assessment)
            apply_assessment(*assessment, spec, blocks, run.path);
        // The seeds the repeats take must not pass the largest (checked here, where the seed
        // is known).
        if (const QString wrong =
                repeats_problem(QStringLiteral("\"repeats\""), run.repeats.count, spec.seed);
            !wrong.isEmpty())
            problem(run.repeats.path, wrong);
        lesson_runs.push_back({run.name, std::move(spec), run.repeats.count});
    }
    if (size == LessonSize::Test) {
        const int train_images = test_train_images_for(lesson_runs);
        for (LessonRun& run : lesson_runs) {
            shrink_for_tests(run.spec, train_images);
            run.repeats = std::min(run.repeats, test_max_repeats);
        }
    }
    return lesson_runs;
}

}  // namespace

Lesson parse_lesson(const QByteArray& json, const QString& file, const DeviceInventory& devices,
                    LessonSize size) {
    QJsonParseError parse_error;
    const QJsonDocument document = QJsonDocument::fromJson(json, &parse_error);
    if (parse_error.error != QJsonParseError::NoError)
        throw LessonError(
            QStringLiteral("%1: invalid JSON at %2: %3")
                .arg(file, json_error_position(json, parse_error.offset), parse_error.errorString())
                .toStdString());
    if (!document.isObject())
        throw LessonError(QStringLiteral("%1: a lesson is a JSON object ({\"title\": ..., "
                                         "\"runs\": [...]}), not an array or a single value")
                              .arg(file)
                              .toStdString());
    if (const auto twice =
            find_duplicate_json_key(std::string_view(json.constData(), std::size_t(json.size()))))
        throw LessonError(
            QStringLiteral("%1:%2: field %3: given twice (first at line %4); keep one")
                .arg(file)
                .arg(twice->line)
                .arg(quoted_for_problem(QString::fromStdString(twice->path)))
                .arg(twice->first_line)
                .toStdString());
    LessonReader reader(json, file);
    Lesson lesson = reader.read(document.object(), devices, size);
    reader.throw_if_problems();
    return lesson;
}

}  // namespace scalelab
