#include "json_duplicate_key.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace scalelab {

namespace {

// An iterator over the document that notes the last character the parser read: when the
// parser reports a key, that is the key's closing quote. nlohmann's SAX events carry no
// positions of their own.
class TrackingIterator {
  public:
    using iterator_category = std::input_iterator_tag;
    using value_type = char;
    using difference_type = std::ptrdiff_t;
    using pointer = const char*;
    using reference = const char&;

    TrackingIterator(const char* at, const char** last_read) : at_(at), last_read_(last_read) {}
    reference operator*() const {
        *last_read_ = at_;
        return *at_;
    }
    TrackingIterator& operator++() {
        ++at_;
        return *this;
    }
    TrackingIterator operator++(int) {
        TrackingIterator before = *this;
        ++at_;
        return before;
    }
    bool operator==(const TrackingIterator& other) const { return at_ == other.at_; }
    bool operator!=(const TrackingIterator& other) const { return at_ != other.at_; }

  private:
    const char* at_;
    const char** last_read_;
};

// The offset of the opening quote of the string whose closing quote is at `closing`: the
// nearest quote before it that is not escaped (preceded by an even number of backslashes).
std::size_t opening_quote(std::string_view document, std::size_t closing) {
    for (std::size_t i = closing; i-- > 0;) {
        if (document[i] != '"')
            continue;
        std::size_t backslashes = 0;
        while (backslashes < i && document[i - 1 - backslashes] == '\\')
            ++backslashes;
        if (backslashes % 2 == 0)
            return i;
    }
    return 0;
}

// Line and column (from 1) of byte `offset`.
std::pair<int, int> line_and_column(std::string_view document, std::size_t offset) {
    const std::string_view before = document.substr(0, offset);
    const std::size_t line_start = before.rfind('\n') + 1;  // npos + 1 == 0
    const auto lines = std::count(before.begin(), before.end(), '\n');
    return {int(lines) + 1, int(offset - line_start) + 1};
}

// SAX handler: one frame per open object or array, each object with the offsets of its keys.
class DuplicateKeyFinder {
  public:
    using json = nlohmann::json;

    DuplicateKeyFinder(std::string_view document, const char** last_read)
        : document_(document), last_read_(last_read) {}

    bool null() { return value(); }
    bool boolean(bool) { return value(); }
    bool number_integer(json::number_integer_t) { return value(); }
    bool number_unsigned(json::number_unsigned_t) { return value(); }
    bool number_float(json::number_float_t, const json::string_t&) { return value(); }
    bool string(json::string_t&) { return value(); }
    bool binary(json::binary_t&) { return value(); }
    bool start_object(std::size_t) { return open(true); }
    bool start_array(std::size_t) { return open(false); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
        return false;
    }

    bool key(json::string_t& key) {
        Frame& object = frames_.back();
        const std::size_t at =
            opening_quote(document_, std::size_t(*last_read_ - document_.data()));
        const auto [earlier, added] = object.keys.try_emplace(key, at);
        object.key = key;
        if (added)
            return true;
        found_ = duplicate(earlier->second, at);
        return false;  // the first duplicate is all the caller wants
    }

    const std::optional<JsonDuplicateKey>& found() const { return found_; }

  private:
    struct Frame {
        bool object = true;
        std::unordered_map<std::string, std::size_t> keys;  // key -> offset of its opening quote
        std::string key;           // in an object: the key of the value being read
        std::size_t elements = 0;  // in an array: how many values have started
    };

    // A value starts: in an array, it is the next element.
    bool value() {
        if (!frames_.empty() && !frames_.back().object)
            ++frames_.back().elements;
        return true;
    }
    bool open(bool object) {
        value();
        frames_.push_back(Frame{object, {}, {}, 0});
        return true;
    }
    bool close() {
        frames_.pop_back();
        return true;
    }

    JsonDuplicateKey duplicate(std::size_t first, std::size_t second) const {
        JsonDuplicateKey found;
        for (const Frame& frame : frames_) {
            if (frame.object)
                found.path += (found.path.empty() ? "" : ".") + frame.key;
            else
                found.path += "[" + std::to_string(frame.elements - 1) + "]";
        }
        std::tie(found.line, found.column) = line_and_column(document_, second);
        std::tie(found.first_line, found.first_column) = line_and_column(document_, first);
        return found;
    }

    std::string_view document_;
    const char** last_read_;
    std::vector<Frame> frames_;
    std::optional<JsonDuplicateKey> found_;
};

}  // namespace

std::optional<JsonDuplicateKey> find_duplicate_json_key(std::string_view document) {
    const char* last_read = document.data();
    DuplicateKeyFinder finder(document, &last_read);
    const char* begin = document.data();
    nlohmann::json::sax_parse(TrackingIterator(begin, &last_read),
                              TrackingIterator(begin + document.size(), &last_read), &finder);
    return finder.found();
}

}  // namespace scalelab
