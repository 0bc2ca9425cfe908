#include "quoted_text.h"

#include <cstdio>

namespace scalelab {

namespace {

bool starts_character(char byte) {
    return (static_cast<unsigned char>(byte) & 0xc0) != 0x80;
}

// The code point of the UTF-8 sequence `bytes` (2 bytes at most matter here: the C1 controls
// are U+0080..U+009F, encoded c2 80..c2 9f); others are returned as 0x100, not a control.
char32_t code_point(std::string_view bytes) {
    const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(bytes[i]); };
    if (bytes.size() == 1)
        return byte(0);
    if (bytes.size() == 2 && byte(0) == 0xc2)
        return byte(1);
    return 0x100;
}

// A control character as printable() shows one: \x1b.
std::string escaped(char32_t code) {
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02x", unsigned(code));
    return hex;
}

}  // namespace

std::string quoted_text(std::string_view text, char quote) {
    std::string out(1, quote);
    std::size_t characters = 0, at = 0;
    while (at < text.size() && characters < quoted_text_characters) {
        std::size_t end = at + 1;
        while (end < text.size() && !starts_character(text[end]))
            ++end;
        const std::string_view character = text.substr(at, end - at);
        const char32_t code = code_point(character);
        out += is_control_character(code) ? escaped(code) : std::string(character);
        ++characters;
        at = end;
    }
    out += quote;
    if (at < text.size())
        out.insert(out.size() - 1, "...").append(" (" + std::to_string(text.size()) + " bytes)");
    return out;
}

}  // namespace scalelab
