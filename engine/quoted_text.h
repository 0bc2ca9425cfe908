#pragma once

#include <string>
#include <string_view>

namespace scalelab {

// Whether a character would act on a terminal instead of showing: C0 controls but the tab,
// DEL, and C1 controls. A NUL cuts output short, an escape sequence changes the terminal.
constexpr bool is_control_character(char32_t code) {
    return (code < 0x20 && code != U'\t') || (code >= 0x7f && code <= 0x9f);
}

// The most characters of a user's text a message quotes: enough to recognise it.
inline constexpr std::size_t quoted_text_characters = 60;

// A text the user gave (a value, a key, a name: UTF-8), as a message quotes it: between
// `quote` marks, each control character shown as \xHH, and a text of more than
// quoted_text_characters characters cut there with its size after it, so that a 50 MB value
// gives a readable line: 'aaaa...aaa...' (52428800 bytes).
std::string quoted_text(std::string_view text, char quote = '\'');

}  // namespace scalelab
