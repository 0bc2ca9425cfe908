#pragma once

#include <QLabel>
#include <QString>

namespace scalelab {

// What a view shows while it has nothing to draw: a centred, muted sentence saying how to get
// something (objectName "emptyState", which tests look for).
inline QLabel* make_empty_state_label(const QString& text) {
    auto* label = new QLabel(text);
    label->setObjectName(QStringLiteral("emptyState"));
    label->setAlignment(Qt::AlignCenter);
    label->setWordWrap(true);
    label->setMargin(24);
    label->setForegroundRole(QPalette::PlaceholderText);
    return label;
}

}  // namespace scalelab
