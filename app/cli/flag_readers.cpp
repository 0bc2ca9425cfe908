#include "cli/flag_readers.h"

#include "cli/flag_values.h"

namespace scalelab::cli {

std::string read_positive(const GivenFlag& given, int& out) {
    const auto value = parse_int(given.value);
    if (!value || *value < 1)
        return "--" + given.name + " expects a positive whole number, got '" + given.value + "'";
    out = *value;
    return {};
}

std::string read_positive_list(const GivenFlag& given, std::vector<int>& out) {
    const auto values = parse_int_list(given.value);
    bool positive = values && !values->empty();
    for (int v : values.value_or(std::vector<int>{}))
        positive = positive && v >= 1;
    if (!positive)
        return "--" + given.name + " expects positive whole numbers like 32,128, got '" +
               given.value + "'";
    out = *values;
    return {};
}

std::string read_in_range(const GivenFlag& given, int min, int max, int& out) {
    const auto value = parse_int(given.value);
    if (!value || *value < min || *value > max)
        return "--" + given.name + " expects a whole number from " + std::to_string(min) + " to " +
               std::to_string(max) + ", got '" + given.value + "'";
    out = *value;
    return {};
}

}  // namespace scalelab::cli
