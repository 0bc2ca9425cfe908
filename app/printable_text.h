#pragma once

#include <QString>

namespace scalelab {

// `text` made safe to print on a terminal. Stored text (run names, tags, messages, from an
// import or another program) may hold control characters: a NUL cuts the output short, an
// escape sequence changes the terminal. Each control character but the tab (C0, DEL, C1) is
// shown as \xHH instead; everything else is kept.
QString printable(const QString& text);

}  // namespace scalelab
