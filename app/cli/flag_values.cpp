#include "cli/flag_values.h"

#include <charconv>
#include <cmath>

namespace scalelab::cli {

namespace {

template <typename T>
std::optional<T> parse_whole(const std::string& text) {
    T value{};
    const char* end = text.data() + text.size();
    const auto [rest, error] = std::from_chars(text.data(), end, value);
    if (error != std::errc() || rest != end || text.empty())
        return std::nullopt;
    return value;
}

}  // namespace

std::optional<int> parse_int(const std::string& text) {
    return parse_whole<int>(text);
}

std::optional<std::uint64_t> parse_uint64(const std::string& text) {
    return parse_whole<std::uint64_t>(text);
}

std::optional<double> parse_double(const std::string& text) {
    const auto value = parse_whole<double>(text);
    if (!value || !std::isfinite(*value))
        return std::nullopt;
    return value;
}

std::optional<std::vector<int>> parse_int_list(const std::string& text) {
    std::vector<int> values;
    for (const std::string& item : split_list(text)) {
        const auto value = parse_int(item);
        if (!value)
            return std::nullopt;
        values.push_back(*value);
    }
    return values;
}

std::optional<std::vector<double>> parse_double_list(const std::string& text) {
    std::vector<double> values;
    for (const std::string& item : split_list(text)) {
        const auto value = parse_double(item);
        if (!value)
            return std::nullopt;
        values.push_back(*value);
    }
    return values;
}

std::string number_text(double value) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, result.ptr);
}

std::vector<std::string> split_list(const std::string& text) {
    std::vector<std::string> items;
    std::size_t start = 0;
    while (start <= text.size()) {
        std::size_t comma = text.find(',', start);
        if (comma == std::string::npos)
            comma = text.size();
        if (comma > start)
            items.push_back(text.substr(start, comma - start));
        start = comma + 1;
    }
    return items;
}

}  // namespace scalelab::cli
