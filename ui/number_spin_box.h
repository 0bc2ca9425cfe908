#pragma once

#include <QDoubleSpinBox>

#include <optional>

namespace scalelab {

// A spin box for any double a RunSpec field may hold: 1e-8 as well as 0.1 or 65536, typed in
// plain or scientific notation, shown in the shortest form that reads back as the same double.
// QDoubleSpinBox rounds to a fixed number of decimals, which would silently turn an eps of 1e-8
// into 0 and make a loaded config come back changed; this one keeps every value exactly and
// its range is every finite double, so an out-of-range entry reaches validation (which says what
// is wrong) instead of being swallowed or clamped.
class NumberSpinBox : public QDoubleSpinBox {
    Q_OBJECT

  public:
    explicit NumberSpinBox(QWidget* parent = nullptr);

    QValidator::State validate(QString& input, int& pos) const override;
    double valueFromText(const QString& text) const override;
    QString textFromValue(double value) const override;

  private:
    // `text` without the prefix and the suffix.
    QString withoutAffixes(const QString& text) const;
    // The finite double `number` (a text without affixes) spells; nothing when it spells none.
    std::optional<double> parse(const QString& number) const;
};

}  // namespace scalelab
