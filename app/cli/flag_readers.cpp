#include "cli/flag_readers.h"

#include "cli/flag_values.h"
#include "quoted_text.h"

namespace scalelab::cli {

std::string expects(const std::string& name, const std::string& what, const std::string& value) {
    return "--" + name + " expects " + what + ", got " + quoted_text(value);
}

std::string read_positive(const GivenFlag& given, int& out) {
    const auto value = parse_int(given.value);
    if (!value || *value < 1)
        return expects(given.name, "a positive whole number", given.value);
    out = *value;
    return {};
}

std::string read_positive_list(const GivenFlag& given, std::vector<int>& out) {
    const auto values = parse_int_list(given.value);
    bool positive = values && !values->empty();
    for (int v : values.value_or(std::vector<int>{}))
        positive = positive && v >= 1;
    if (!positive)
        return expects(given.name, "positive whole numbers like 32,128", given.value);
    out = *values;
    return {};
}

std::string read_in_range(const GivenFlag& given, int min, int max, int& out) {
    const auto value = parse_int(given.value);
    if (!value || *value < min || *value > max)
        return expects(given.name,
                       "a whole number from " + std::to_string(min) + " to " + std::to_string(max),
                       given.value);
    out = *value;
    return {};
}

}  // namespace scalelab::cli
