#pragma once

#include <QString>

#include <optional>
#include <vector>

namespace scalelab {

// Lists of numbers as people type them in one field: "1, 2, 4", "0.05 0.1", "30,60". Commas
// and spaces both separate; an empty text is an empty list. A token that is not a number is a
// problem naming it ("'x' is not a number"), never skipped.

// Whole numbers. Nothing, and `problem` set, when a token is not one.
std::optional<std::vector<int>> parse_whole_numbers(const QString& text, QString* problem);

// Finite numbers in C notation ("0.1", "1e-3"), since the comma separates entries.
std::optional<std::vector<double>> parse_numbers(const QString& text, QString* problem);

// The lists as the parsers read them back: "30, 60"; doubles in their shortest exact form.
QString format_list(const std::vector<int>& values);
QString format_list(const std::vector<double>& values);

}  // namespace scalelab
