#include "cli/field_flags.h"

#include <type_traits>
#include <variant>

#include "cli/flag_readers.h"
#include "cli/flag_values.h"

namespace scalelab::cli {

namespace {

// "a number in (0, 1]", "a whole number from 1 to 64", "whole numbers of at least 1".
std::string expected_value(const SpecField& field, bool list) {
    std::string text = field.whole() ? (list ? "whole numbers" : "a whole number")
                                     : (list ? "numbers" : "a number");
    if (field.range)
        text += " " + field.range->text(field.whole());
    return text;
}

bool in_range(const SpecField& field, double value) {
    return !field.range || field.range->contains(value);
}

template <typename T>
std::optional<T> parse_value(const std::string& text);
template <>
std::optional<int> parse_value(const std::string& text) {
    return parse_int(text);
}
template <>
std::optional<double> parse_value(const std::string& text) {
    return parse_double(text);
}
template <>
std::optional<std::uint64_t> parse_value(const std::string& text) {
    return parse_uint64(text);
}
template <>
std::optional<std::vector<int>> parse_value(const std::string& text) {
    return parse_int_list(text);
}
template <>
std::optional<std::vector<double>> parse_value(const std::string& text) {
    return parse_double_list(text);
}

// Reads a value of the field's type into spec.*member, or says what the flag expects.
template <typename T>
std::string read_value(const SpecField& field, T RunSpec::*member, const std::string& value,
                       RunSpec& spec) {
    const std::string name(field.flag);
    if constexpr (std::is_same_v<T, bool>) {
        spec.*member = !name.starts_with("no-");
    } else if constexpr (std::is_same_v<T, std::string>) {
        // An empty value ("--data ''", an unset shell variable) is refused rather than taken
        // as the default: the user asked for something, and got something else.
        if (value.empty())
            return "--" + name +
                   " needs a value, not an empty one: leave the flag out for the "
                   "default";
        spec.*member = value;
    } else if constexpr (std::is_enum_v<T>) {
        const auto parsed = EnumNames<T>::table.parse(value);
        if (!parsed)
            return expects(name, "one of " + EnumNames<T>::table.choices("|"), value);
        spec.*member = *parsed;
    } else {
        constexpr bool list =
            std::is_same_v<T, std::vector<int>> || std::is_same_v<T, std::vector<double>>;
        const std::optional<T> parsed = parse_value<T>(value);
        bool fits = parsed.has_value();
        if constexpr (list)
            for (std::size_t i = 0; fits && i < parsed->size(); ++i)
                fits = in_range(field, double((*parsed)[i]));
        else if constexpr (!std::is_same_v<T, std::uint64_t>)
            fits = fits && in_range(field, double(*parsed));
        if (!fits)
            return expects(
                name,
                expected_value(field, list) + (list ? " like " + std::string(field.example) : ""),
                value);
        spec.*member = *parsed;
    }
    return {};
}

// What --help shows after the flag: "N", "X", "NAME", "N1,N2".
template <typename T>
std::string value_name(const SpecField& field) {
    if constexpr (std::is_same_v<T, bool>)
        return "";
    else if constexpr (std::is_same_v<T, int> || std::is_same_v<T, std::uint64_t>)
        return "N";
    else if constexpr (std::is_same_v<T, double>)
        return "X";
    else if constexpr (std::is_same_v<T, std::vector<int>>)
        return "N1,N2";
    else if constexpr (std::is_same_v<T, std::vector<double>>)
        return "X1,X2";
    else if constexpr (std::is_same_v<T, std::string>)
        return field.names ? "NAME" : "DIR";
    else
        return "NAME";
}

// The field's help, the values it takes and its default: "the base learning rate, before the
// scaling rule; above 0 (default 0.05)".
std::string help_text(const SpecField& field, bool is_switch, bool is_enum_or_name) {
    std::string text(field.help);
    if (is_enum_or_name) {
        const std::string value = field_value_text(field, RunSpec{});
        return text + " (default " + value + ")";
    }
    if (is_switch)
        return text;
    if (field.range)
        text += "; " + field.range->text(field.whole());
    if (!field.unit.empty())
        text += std::string(field.range ? " " : "; in ") + std::string(field.unit);
    const std::string value = field_value_text(field, RunSpec{});
    return text + " (default " + (value.empty() ? "none" : value) + ")";
}

}  // namespace

FieldFlag field_flag(const SpecField& field) {
    return std::visit(
        [&field](auto member) -> FieldFlag {
            using T = std::remove_cvref_t<decltype(RunSpec{}.*member)>;
            std::string help =
                help_text(field, std::is_same_v<T, bool>,
                          std::is_enum_v<T> || (std::is_same_v<T, std::string> && field.names));
            if constexpr (std::is_enum_v<T>)
                help = EnumNames<T>::table.choices("|") + ": " + help;
            else if constexpr (std::is_same_v<T, std::string>)
                if (field.names) {
                    std::string names;
                    for (const std::string& name : field.names())
                        names += (names.empty() ? "" : "|") + name;
                    help = names + ": " + help;
                }
            return {{std::string(field.flag), value_name<T>(field), help,
                     std::string(to_string(field.group))},
                    [&field, member](const std::string& value, RunSpec& spec) {
                        return read_value(field, member, value, spec);
                    }};
        },
        field.member);
}

}  // namespace scalelab::cli
