#pragma once

#include <functional>
#include <string>

#include "cli/flag_parser.h"
#include "train/spec_fields.h"

namespace scalelab::cli {

// The flag of a RunSpec field (SpecField::flag), made from the field table: its value name, its
// help (the field's help, the values it takes, its default) and how its value is read. A value
// the field cannot take, outside its range included, is the flag's problem: "--lr expects a
// number above 0, got '-1'".
struct FieldFlag {
    Flag flag;
    // Stores the value in `spec`; returns the problem, or "" when stored.
    std::function<std::string(const std::string& value, RunSpec& spec)> read;
};

FieldFlag field_flag(const SpecField& field);

}  // namespace scalelab::cli
