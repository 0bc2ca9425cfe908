// The field table (spec_fields.h) against every place that reads it: RunSpec's members, JSON,
// the train flags and --help, RunSpec::validate() and docs/fields.md. A field left out of one of
// them, or two of them that disagree on a field's range, fails here; the form is checked
// against the table by test_experiment_form.

#include <QFile>
#include <QRegularExpression>
#include <QtTest>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <type_traits>
#include <variant>

#include "cli/train_options.h"
#include "field_reference.h"
#include "run_spec_json.h"
#include "train/spec_fields.h"

using namespace scalelab;

namespace {

QString read_source(const char* relative) {
    QFile file(QDir(QStringLiteral(SCALELAB_SOURCE_DIR)).filePath(QLatin1String(relative)));
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

// The data members `struct RunSpec { ... };` declares in `header`, by name.
std::set<std::string> run_spec_members(const QString& header) {
    const qsizetype begin = header.indexOf(QLatin1String("struct RunSpec {"));
    const qsizetype end = header.indexOf(QLatin1String("\n};"), begin);
    std::set<std::string> names;
    static const QRegularExpression member(
        QStringLiteral(R"(^\s+[\w:<>]+(?:<[\w:]+>)?\s+(\w+)(?:\s*=[^;]*|\{[^;]*\})?;)"),
        QRegularExpression::MultilineOption);
    for (auto match = member.globalMatch(header.mid(begin, end - begin)); match.hasNext();)
        names.insert(match.next().captured(1).toStdString());
    return names;
}

// The members that have no entry in the field table.
std::vector<std::string> members_not_in_table(const std::set<std::string>& members) {
    std::vector<std::string> missing;
    for (const std::string& name : members)
        if (!find_spec_field(name))
            missing.push_back(name);
    return missing;
}

// A number of the field's range other than `now`: its closed end, else its middle, else now + 1.
double changed_number(const SpecField& field, double now) {
    if (!field.range)
        return now + 1;
    const NumberRange& range = *field.range;
    if (!range.min_open && range.min != now)
        return range.min;
    if (!range.max_open && range.max != now && range.max < 1e6)
        return range.max;
    return std::isfinite(range.max) ? (range.min + range.max) / 2 : now + 1;
}

// A spec whose field differs from the default: another number of its range, another name.
RunSpec with_changed(const SpecField& field) {
    RunSpec spec;
    std::visit(
        [&](auto member) {
            using T = std::remove_cvref_t<decltype(spec.*member)>;
            T& value = spec.*member;
            if constexpr (std::is_same_v<T, bool>)
                value = !value;
            else if constexpr (std::is_same_v<T, std::string>)
                value = field.names ? field.names().back() : "/some/folder";
            else if constexpr (std::is_enum_v<T>)
                value = EnumNames<T>::table.entries.back().first == value
                            ? EnumNames<T>::table.entries.front().first
                            : EnumNames<T>::table.entries.back().first;
            else if constexpr (std::is_same_v<T, std::vector<int>>)
                value = {3, 7};
            else if constexpr (std::is_same_v<T, std::vector<double>>)
                value = {0.5};
            else if constexpr (std::is_same_v<T, std::uint64_t>)
                value = 18446744073709551615ull;
            else
                value = T(changed_number(field, double(value)));
        },
        field.member);
    return spec;
}

// Whether validate() says the field is out of its range.
bool out_of_range(const RunSpec& spec, const SpecField& field) {
    const std::string start = std::string(field.key) + " must ";
    for (const std::string& problem : spec.validate())
        if (problem.starts_with(start))
            return true;
    return false;
}

// Whether the field's flag refuses `value`.
bool flag_refuses(const SpecField& field, double value) {
    const std::string text = QString::number(value, 'g', 17).toStdString();
    return !cli::parse_train_options({"--" + std::string(field.flag), text}).problems.empty();
}

template <typename T>
bool is_number_member(const FieldMember& member) {
    return std::holds_alternative<T RunSpec::*>(member);
}

}  // namespace

class TestSpecFields : public QObject {
    Q_OBJECT

  private slots:
    void everyRunSpecMemberIsInTheTable() {
        const std::set<std::string> members =
            run_spec_members(read_source("engine/train/run_spec.h"));
        QVERIFY2(members.size() >= 50, "run_spec.h's RunSpec was not found");
        for (const std::string& missing : members_not_in_table(members))
            QFAIL(("RunSpec::" + missing + " is not in the table").c_str());
        for (const SpecField& field : spec_fields())
            QVERIFY2(members.count(std::string(field.key)),
                     (std::string(field.key) + " is in the table but not in RunSpec").c_str());
    }

    void everyFieldGoesThroughJson() {
        for (const SpecField& field : spec_fields()) {
            const RunSpec changed = with_changed(field);
            QVERIFY2(field_value_text(field, changed) != field_value_text(field, RunSpec{}),
                     field.key.data());
            const QByteArray json = QJsonDocument(run_spec_to_json(changed)).toJson();
            QVERIFY2(json.contains(QByteArray("\"") + field.key.data() + "\""), field.key.data());
            QCOMPARE(field_value_text(field, run_spec_from_json(json)),
                     field_value_text(field, changed));
            // Alone in a file, the key sets its field.
            const QString key = QString::fromUtf8(field.key.data(), qsizetype(field.key.size()));
            const QJsonObject one{{key, run_spec_to_json(changed).value(key)}};
            QCOMPARE(field_value_text(field, run_spec_from_json(QJsonDocument(one).toJson())),
                     field_value_text(field, changed));
        }
    }

    // Every field has its flag in --help, but the two that --warmup-epochs and --warmup-steps
    // set together; and giving the flag sets the field.
    void everyFieldHasAFlag() {
        const std::string help = cli::train_help();
        for (const SpecField& field : spec_fields()) {
            if (field.flag.empty()) {
                QVERIFY2(field.key == "warmup_length" || field.key == "warmup_unit",
                         field.key.data());
                continue;
            }
            QVERIFY2(help.find("--" + std::string(field.flag)) != std::string::npos,
                     field.key.data());
            const RunSpec changed = with_changed(field);
            const bool is_switch = std::holds_alternative<bool RunSpec::*>(field.member);
            std::vector<std::string> words{"--" + std::string(field.flag)};
            if (!is_switch)
                words.push_back(field_value_text(field, changed));
            const cli::ParsedTrainOptions parsed = cli::parse_train_options(words);
            QVERIFY2(parsed.problems.empty(), field.key.data());
            QCOMPARE(field_value_text(field, parsed.options.spec),
                     field_value_text(field, changed));
        }
    }

    // At each finite bound, validate() and the flag agree: the bound itself is taken when the
    // range includes it, and the nearest value beyond it is refused by both.
    void validateChecksEveryRangeAtItsBounds() {
        int checked = 0;
        for (const SpecField& field : spec_fields()) {
            const bool is_int = is_number_member<int>(field.member);
            if (!field.range || !(is_int || is_number_member<double>(field.member)))
                continue;
            for (const bool lower : {true, false}) {
                const double bound = lower ? field.range->min : field.range->max;
                const bool open = lower ? field.range->min_open : field.range->max_open;
                if (!std::isfinite(bound) || (is_int && std::abs(bound) >= 2147483647.0))
                    continue;
                const double outside = is_int ? bound + (lower ? -1 : 1)
                                              : std::nextafter(bound, lower ? -INFINITY : INFINITY);
                for (const auto& [tried, taken] : {std::pair{bound, !open}, {outside, false}}) {
                    const double value = tried;  // a lambda may not capture a binding (clang)
                    RunSpec spec;
                    std::visit(
                        [&](auto member) {
                            using T = std::remove_cvref_t<decltype(spec.*member)>;
                            if constexpr (std::is_same_v<T, int> || std::is_same_v<T, double>)
                                spec.*member = T(value);
                        },
                        field.member);
                    const QString where =
                        QStringLiteral("%1 = %2").arg(field.key.data()).arg(value, 0, 'g', 17);
                    QVERIFY2(out_of_range(spec, field) == !taken, qPrintable(where));
                    if (!field.flag.empty())
                        QVERIFY2(flag_refuses(field, value) == !taken, qPrintable(where));
                    ++checked;
                }
            }
        }
        QVERIFY(checked >= 60);
    }

    void docsFieldsIsTheTable() {
        const QString docs = read_source("docs/fields.md");
        QVERIFY2(docs == QString::fromStdString(field_reference_markdown()),
                 "docs/fields.md differs from the field table: scalelab-cli fields > "
                 "docs/fields.md");
    }

    // The member check fails where it should: a member added to RunSpec without its entry.
    void aMemberWithoutAnEntryIsFound() {
        const std::set<std::string> members = run_spec_members(
            QStringLiteral("struct RunSpec {\n    int epochs = 2;\n    double colour = 1;\n"
                           "    std::vector<int> gpus;\n};\n"));
        QCOMPARE(members, (std::set<std::string>{"colour", "epochs", "gpus"}));
        QCOMPARE(members_not_in_table(members), std::vector<std::string>{"colour"});
    }
};

QTEST_GUILESS_MAIN(TestSpecFields)
#include "test_spec_fields.moc"
