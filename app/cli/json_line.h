#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace scalelab::cli {

// Builds one JSON object on one line, keys in the order they are added (a reader sees "type"
// first). Hand-written rather than QJsonObject because step rows are written at every training
// step from the trainer's thread and QJsonObject sorts keys and allocates per value.
class JsonLine {
  public:
    JsonLine& add(std::string_view key, std::string_view value);
    JsonLine& add(std::string_view key, const char* value) {
        return add(key, std::string_view(value));
    }
    JsonLine& add(std::string_view key, double value);  // NaN and infinities become null
    JsonLine& add(std::string_view key, std::int64_t value);
    JsonLine& add(std::string_view key, int value) { return add(key, std::int64_t(value)); }
    JsonLine& add(std::string_view key, const std::vector<std::string>& values);  // strings
    JsonLine& add(std::string_view key, const std::vector<JsonLine>& objects);    // objects
    // `json` as it is: the caller's valid JSON text (an object another writer made).
    JsonLine& add_json(std::string_view key, std::string_view json);

    // The object, without a trailing newline.
    std::string str() const { return text_ + "}"; }

  private:
    void add_key(std::string_view key);

    std::string text_ = "{";
};

}  // namespace scalelab::cli
