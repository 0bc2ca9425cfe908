#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "train/run_spec.h"

namespace scalelab {

// Every RunSpec field described once: its JSON key, its command-line flag, its label and help,
// its unit, the values it takes, where it sits and when it applies. The JSON reader and writer,
// `scalelab-cli train`'s flags and --help, the experiment form's rows, their tooltips and when
// they show, the range checks of RunSpec::validate() and docs/fields.md (`scalelab-cli fields`)
// all read this table; the rules that involve several fields stay in validate().
//
// Adding a field: the member in RunSpec, one entry in spec_fields() (spec_fields.cpp), and the
// code that uses it. test_spec_fields fails while JSON, the flags, the form or the docs lack it.

// The values a number field takes: from `min` to `max`, either end open or unbounded (an
// infinite bound). A whole-number field takes the whole numbers in it.
struct NumberRange {
    double min = 0;
    double max = 0;
    bool min_open = false;
    bool max_open = false;

    bool contains(double value) const;
    // As messages and help say it: "in (0, 1]", "above 0", "of at least 0"; for whole numbers
    // "from 1 to 64", "of at least 1".
    std::string text(bool whole) const;
};

// The groups of the experiment form, which `train --help` follows too.
enum class FieldGroup {
    DevicesAndBatch,
    ModelAndData,
    Training,
    Optimizer,
    Schedule,
    Warmup,
    Advanced
};

template <>
struct EnumNames<FieldGroup> {
    static constexpr NameTable<FieldGroup, 7> table{
        {{{FieldGroup::DevicesAndBatch, "Devices and batch"},
          {FieldGroup::ModelAndData, "Model and data"},
          {FieldGroup::Training, "Training"},
          {FieldGroup::Optimizer, "Optimizer"},
          {FieldGroup::Schedule, "Schedule"},
          {FieldGroup::Warmup, "Warm-up"},
          {FieldGroup::Advanced, "Advanced"}}}};
};

// The RunSpec member a field is, by its type.
using FieldMember =
    std::variant<int RunSpec::*, double RunSpec::*, bool RunSpec::*, std::uint64_t RunSpec::*,
                 std::string RunSpec::*, std::vector<int> RunSpec::*,
                 std::vector<double> RunSpec::*, ScheduleKind RunSpec::*, WarmupUnit RunSpec::*,
                 WarmupKind RunSpec::*, OptimizerKind RunSpec::*, LrScaling RunSpec::*,
                 Augmentation RunSpec::*, DeviceKind RunSpec::*>;

struct SpecField {
    std::string_view key;  // in JSON, lesson and config files, and validate()'s messages
    FieldMember member;
    FieldGroup group;
    // The flag without its dashes: "trust-coefficient". For a switch, giving it sets the field
    // to true, or to false when it starts with "no-" (--no-overlap). Empty: set by a flag that
    // is not one field's (warmup_length and warmup_unit, by --warmup-epochs and --warmup-steps).
    std::string_view flag;
    std::string_view label;  // the form's, "Trust coefficient"
    std::string_view help;   // one sentence for the tooltip, --help and the docs
    std::string_view unit;   // "epochs", "MB", "s"; empty for none
    // Numbers, and the items of a list of numbers: the values validate() accepts (other rules
    // aside, such as a divisor of the batch). None: any value of the type.
    std::optional<NumberRange> range;
    // When the field matters ("with LARS"); the form shows its row only then. Empty: always.
    std::string_view applies_when;
    bool (*applies)(const RunSpec&) = nullptr;
    // A name field's choices (model, dataset); null for free text.
    const std::vector<std::string>& (*names)() = nullptr;
    // A list field's example, as the flag and the form show it: "0,2".
    std::string_view example;

    bool applies_to(const RunSpec& spec) const { return applies == nullptr || applies(spec); }
    // Whether the field holds whole numbers (an int, the seed, a list of ints).
    bool whole() const;
};

// Every field, in the order of RunSpec (and of JSON files ScaleLab writes).
const std::vector<SpecField>& spec_fields();

// The field of `key`, or null.
const SpecField* find_spec_field(std::string_view key);
// The field that is `member`; every member has one (test_spec_fields checks it).
const SpecField& spec_field(const FieldMember& member);

// The field's value in `spec` as text: "0.05", "true", "cosine", "0.85,0.9".
std::string field_value_text(const SpecField& field, const RunSpec& spec);

}  // namespace scalelab
