#include "number_lists.h"

#include <QLocale>
#include <QRegularExpression>
#include <QStringList>

#include <cmath>

namespace scalelab {

namespace {

QStringList tokens(const QString& text) {
    static const QRegularExpression separators(QStringLiteral("[,\\s]+"));
    return text.split(separators, Qt::SkipEmptyParts);
}

}  // namespace

std::optional<std::vector<int>> parse_whole_numbers(const QString& text, QString* problem) {
    std::vector<int> values;
    for (const QString& token : tokens(text)) {
        bool ok = false;
        const int value = token.toInt(&ok);
        if (!ok) {
            *problem = QStringLiteral("'%1' is not a whole number").arg(token);
            return std::nullopt;
        }
        values.push_back(value);
    }
    return values;
}

std::optional<std::vector<double>> parse_numbers(const QString& text, QString* problem) {
    std::vector<double> values;
    for (const QString& token : tokens(text)) {
        bool ok = false;
        const double value = token.toDouble(&ok);
        if (!ok || !std::isfinite(value)) {
            *problem = QStringLiteral("'%1' is not a number").arg(token);
            return std::nullopt;
        }
        values.push_back(value);
    }
    return values;
}

QString format_list(const std::vector<int>& values) {
    QStringList texts;
    for (int v : values)
        texts.append(QString::number(v));
    return texts.join(QStringLiteral(", "));
}

QString format_list(const std::vector<double>& values) {
    QStringList texts;
    for (double v : values)
        texts.append(QString::number(v, 'g', QLocale::FloatingPointShortest));
    return texts.join(QStringLiteral(", "));
}

}  // namespace scalelab
