#include "field_reference.h"

#include <type_traits>
#include <variant>

#include "train/spec_fields.h"

namespace scalelab {

namespace {

// The values a field takes, in words: "a whole number from 1 to 64", "one of sgd, lars, ...".
std::string values_text(const SpecField& field) {
    return std::visit(
        [&field](auto member) -> std::string {
            using T = std::remove_cvref_t<decltype(RunSpec{}.*member)>;
            std::string text;
            if constexpr (std::is_same_v<T, bool>)
                return "true or false";
            else if constexpr (std::is_enum_v<T>)
                return "one of " + EnumNames<T>::table.choices(", ", "`");
            else if constexpr (std::is_same_v<T, std::string>) {
                if (!field.names)
                    return "a folder";
                for (const std::string& name : field.names())
                    text += (text.empty() ? "one of `" : ", `") + name + "`";
                return text;
            } else {
                constexpr bool list =
                    std::is_same_v<T, std::vector<int>> || std::is_same_v<T, std::vector<double>>;
                text = field.whole() ? (list ? "whole numbers" : "a whole number")
                                     : (list ? "numbers" : "a number");
                if (field.range)
                    text += " " + field.range->text(field.whole());
                if (!field.unit.empty())
                    text += " (" + std::string(field.unit) + ")";
                return list ? "a list of " + text + ", e.g. `" + std::string(field.example) + "`"
                            : text;
            }
        },
        field.member);
}

// A table cell: no line breaks, no bar that would end the cell.
std::string cell(std::string text) {
    for (char& c : text)
        if (c == '|' || c == '\n')
            c = c == '|' ? '/' : ' ';
    return text;
}

}  // namespace

std::string field_reference_markdown() {
    std::string text =
        "# Experiment fields\n\n"
        "Every field of an experiment, as a `--config` file, a lesson file and an exported run's\n"
        "`config` spell it (the key), as `scalelab-cli train` sets it (the flag) and as the\n"
        "experiment form shows it (the group and label). One table in the code describes them\n"
        "all (`engine/train/spec_fields.cpp`); this page is printed from it by\n"
        "`scalelab-cli fields` and checked against it by `test_spec_fields`. A field that does\n"
        "not apply to a run (`when`) is kept but has no effect, and the form hides it. Rules\n"
        "that involve several fields (a ghost batch that divides the batch, a warm-up shorter\n"
        "than the run) are in `RunSpec::validate()` and in docs/errors.md.\n";
    for (const auto& [group, group_name] : EnumNames<FieldGroup>::table.entries) {
        text += "\n## " + std::string(group_name) + "\n\n";
        text += "| key | flag | label | default | values | when | what it does |\n";
        text += "| --- | --- | --- | --- | --- | --- | --- |\n";
        for (const SpecField& field : spec_fields()) {
            if (field.group != group)
                continue;
            const std::string value = field_value_text(field, RunSpec{});
            text +=
                "| `" + std::string(field.key) + "` | " +
                (field.flag.empty() ? "(see below)" : "`--" + std::string(field.flag) + "`") +
                " | " + cell(std::string(field.label)) + " | " +
                (value.empty() ? "(none)" : "`" + cell(value) + "`") + " | " +
                cell(values_text(field)) + " | " +
                (field.applies_when.empty() ? "always" : cell(std::string(field.applies_when))) +
                " | " + cell(std::string(field.help)) + " |\n";
        }
    }
    text +=
        "\n`warmup_length` and `warmup_unit` are set together on the command line:\n"
        "`--warmup-epochs X` (X epochs) or `--warmup-steps N` (N steps).\n";
    return text;
}

}  // namespace scalelab
