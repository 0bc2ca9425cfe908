#pragma once

#include <QColor>

#include "theme.h"

namespace scalelab {

// How many colours runs take before they repeat.
inline constexpr int run_colour_count = 8;

// The colour of a run from its palette index (RunRecord::colour), repeating after
// run_colour_count: Paul Tol's "bright" set, chosen to stay apart for viewers with red-green or
// blue-yellow colour blindness, and an orange. Each is made dark enough on the light theme, or
// light enough on the dark one, for a line on the chart background to reach WCAG's 3:1.
QColor run_colour(int index, Theme theme);
// In the application's current theme.
QColor run_colour(int index);

}  // namespace scalelab
