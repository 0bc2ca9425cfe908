#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace scalelab {

// A key given twice in one JSON object. JSON readers (Qt's among them) keep one of the values
// without a word, so a file that says two things would silently mean one of them.
struct JsonDuplicateKey {
    // The key with the objects and arrays it is in, as the lesson messages name fields:
    // "epochs", "runs[2].lr".
    std::string path;
    // Where it is given the second time and the first: the line and column (both from 1, the
    // column in bytes) of the key's opening quote, as json_error_position() counts them.
    int line = 0;
    int column = 0;
    int first_line = 0;
    int first_column = 0;
};

// The first key of `document`, in reading order, that its object has already; nothing when
// every object's keys differ, or when `document` stops being valid JSON before its first
// duplicate (the caller's own parser says what is wrong with it then). Keys are compared after
// their escapes are decoded, so "lr" and "\u006cr" are the same key. Its cost is one more pass of a
// SAX parser, and memory for the keys of the objects open at any one time.
std::optional<JsonDuplicateKey> find_duplicate_json_key(std::string_view document);

}  // namespace scalelab
