// Fuzzes printable(), through which every text of a stored run (names, tags, messages, from an
// import or another program) reaches the terminal. Input: the text's UTF-8 bytes (invalid ones
// included: QString::fromUtf8 replaces them, as the store's reader does). Checks its promises:
// no control character but the tab survives, and a text without any comes out as it was.

#include <QString>

#include <cstddef>
#include <cstdint>

#include "fuzz_input.h"
#include "printable_text.h"

namespace {

bool is_control(char16_t code) {
    return (code < 0x20 && code != u'\t') || (code >= 0x7f && code <= 0x9f);
}

bool has_control(const QString& text) {
    for (const QChar c : text)
        if (is_control(c.unicode()))
            return true;
    return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const QString text = QString::fromUtf8(reinterpret_cast<const char*>(data), qsizetype(size));
    const QString shown = scalelab::printable(text);
    scalelab::fuzz::require(!has_control(shown), "printable text has no control characters");
    if (!has_control(text))
        scalelab::fuzz::require(shown == text, "text without control characters is kept");
    else
        scalelab::fuzz::require(shown.size() > text.size(), "each control character is spelled");
    return 0;
}
