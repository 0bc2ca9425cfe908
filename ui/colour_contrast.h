#pragma once

#include <QColor>

namespace scalelab {

// WCAG 2 relative luminance: 0.2126 R + 0.7152 G + 0.0722 B of the linearised sRGB channels.
double relative_luminance(const QColor& colour);

// WCAG 2 contrast ratio (L_lighter + 0.05) / (L_darker + 0.05), from 1 to 21. Text needs 4.5
// (level AA), lines and other graphics 3 (success criterion 1.4.11).
double contrast_ratio(const QColor& a, const QColor& b);

inline constexpr double text_contrast = 4.5;
inline constexpr double graphics_contrast = 3.0;

// `colour` with its hue and saturation kept and its lightness moved away from `background`
// (darker on a light background, lighter on a dark one) until their contrast ratio reaches
// `ratio`; `colour` itself when it already does.
QColor readable_on(const QColor& colour, const QColor& background, double ratio);

}  // namespace scalelab
