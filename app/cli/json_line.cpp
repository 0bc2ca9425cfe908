#include "cli/json_line.h"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace scalelab::cli {

namespace {

void append_quoted(std::string& out, std::string_view text) {
    out += '"';
    for (const char c : text) {
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char escaped[8];
                    std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
                    out += escaped;
                } else {
                    out += c;
                }
        }
    }
    out += '"';
}

template <typename Number>
void append_number(std::string& out, Number value) {
    char buffer[32];
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
    out.append(buffer, result.ptr);
}

}  // namespace

void JsonLine::add_key(std::string_view key) {
    if (text_.size() > 1)
        text_ += ',';
    append_quoted(text_, key);
    text_ += ':';
}

JsonLine& JsonLine::add(std::string_view key, std::string_view value) {
    add_key(key);
    append_quoted(text_, value);
    return *this;
}

JsonLine& JsonLine::add(std::string_view key, double value) {
    add_key(key);
    if (std::isfinite(value))
        append_number(text_, value);
    else
        text_ += "null";  // JSON has no NaN or infinity (RFC 8259, section 6)
    return *this;
}

JsonLine& JsonLine::add(std::string_view key, std::int64_t value) {
    add_key(key);
    append_number(text_, value);
    return *this;
}

JsonLine& JsonLine::add(std::string_view key, const std::vector<std::string>& values) {
    add_key(key);
    text_ += '[';
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0)
            text_ += ',';
        append_quoted(text_, values[i]);
    }
    text_ += ']';
    return *this;
}

JsonLine& JsonLine::add_json(std::string_view key, std::string_view json) {
    add_key(key);
    text_ += json;
    return *this;
}

JsonLine& JsonLine::add(std::string_view key, const std::vector<JsonLine>& objects) {
    add_key(key);
    text_ += '[';
    for (std::size_t i = 0; i < objects.size(); ++i) {
        if (i > 0)
            text_ += ',';
        text_ += objects[i].str();
    }
    text_ += ']';
    return *this;
}

}  // namespace scalelab::cli
