#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace scalelab::cli {

// Reading flag values: the whole text must be the number, in the C locale. Each returns
// nothing when the text is not one, and the caller names the flag in its message.
std::optional<int> parse_int(const std::string& text);
std::optional<std::uint64_t> parse_uint64(const std::string& text);
std::optional<double> parse_double(const std::string& text);  // finite only

// "30,60" -> {30, 60}; "" -> {}.
std::optional<std::vector<int>> parse_int_list(const std::string& text);

// "0.85,0.9" -> {0.85, 0.9}; "" -> {}. Finite numbers only.
std::optional<std::vector<double>> parse_double_list(const std::string& text);

// The shortest text that reads back as `value` ("0.05", "1e-05"), for help texts.
std::string number_text(double value);

// "cnn,resnet8" -> {"cnn", "resnet8"}; empty items are dropped.
std::vector<std::string> split_list(const std::string& text);

}  // namespace scalelab::cli
