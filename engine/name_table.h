#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace scalelab {

// The names of a closed enum's values, in declaration order: the one list that to_string(),
// parsing, and the choices that messages, help texts and forms show all read, so that each name
// is written once and a new value cannot be named in one place and missing from another.
template <typename Enum, std::size_t N>
struct NameTable {
    std::array<std::pair<Enum, std::string_view>, N> entries;

    // Empty for a value outside the table: a bug in the caller, never user input.
    constexpr std::string_view name(Enum value) const {
        for (const auto& [entry, name] : entries)
            if (entry == value)
                return name;
        return {};
    }

    constexpr std::optional<Enum> parse(std::string_view name) const {
        for (const auto& [value, entry] : entries)
            if (entry == name)
                return value;
        return std::nullopt;
    }

    // Every name, each between `quote`s, joined by `separator`: "none|linear|sqrt".
    std::string choices(std::string_view separator, std::string_view quote = "") const {
        std::string out;
        for (const auto& [value, name] : entries) {
            if (!out.empty())
                out += separator;
            out.append(quote).append(name).append(quote);
        }
        return out;
    }
};

// The table of an enum that generic code (JSON fields, CLI flags, form editors) reads by type:
// a specialisation with `static constexpr NameTable<Enum, N> table`, beside the enum.
template <typename Enum>
struct EnumNames;

// "cosine" for ScheduleKind::Cosine: the name of a value of any enum that has a table.
template <typename Enum>
requires requires {
    EnumNames<Enum>::table;
}
constexpr std::string_view to_string(Enum value) {
    return EnumNames<Enum>::table.name(value);
}

}  // namespace scalelab
