#pragma once

#include <QByteArray>
#include <QString>

namespace scalelab {

// Where in `document` a QJsonParseError's byte offset lies, as people look for it:
// "line 3, column 14".
inline QString json_error_position(const QByteArray& document, qsizetype offset) {
    const QByteArray before = document.left(offset);
    const qsizetype line_start = before.lastIndexOf('\n') + 1;
    return QStringLiteral("line %1, column %2")
        .arg(before.count('\n') + 1)
        .arg(offset - line_start + 1);
}

}  // namespace scalelab
