#include "number_spin_box.h"

#include <cmath>
#include <limits>

namespace scalelab {

NumberSpinBox::NumberSpinBox(QWidget* parent) : QDoubleSpinBox(parent) {
    // QDoubleSpinBox rounds every value to `decimals` places; the most it allows keeps every
    // double a user can type unchanged.
    setDecimals(std::numeric_limits<double>::max_exponent10 +
                std::numeric_limits<double>::digits10);
    setRange(-std::numeric_limits<double>::max(), std::numeric_limits<double>::max());
}

QString NumberSpinBox::withoutAffixes(const QString& text) const {
    QString number = text.trimmed();
    if (!prefix().isEmpty() && number.startsWith(prefix().trimmed()))
        number.remove(0, prefix().trimmed().size());
    if (!suffix().isEmpty() && number.endsWith(suffix().trimmed()))
        number.chop(suffix().trimmed().size());
    return number.trimmed();
}

std::optional<double> NumberSpinBox::parse(const QString& number) const {
    bool ok = false;
    const double value = locale().toDouble(number, &ok);
    if (!ok || !std::isfinite(value))
        return std::nullopt;
    return value;
}

QValidator::State NumberSpinBox::validate(QString& input, int& /*pos*/) const {
    const QString number = withoutAffixes(input);
    if (parse(number))
        return QValidator::Acceptable;
    // A number still being typed ("", "-", "0.", "1e-") becomes one when a digit follows.
    if (parse(number + QLatin1Char('0')))
        return QValidator::Intermediate;
    return QValidator::Invalid;
}

double NumberSpinBox::valueFromText(const QString& text) const {
    return parse(withoutAffixes(text)).value_or(value());
}

QString NumberSpinBox::textFromValue(double value) const {
    QLocale numbers = locale();
    numbers.setNumberOptions(QLocale::OmitGroupSeparator);
    return numbers.toString(value, 'g', QLocale::FloatingPointShortest);
}

}  // namespace scalelab
