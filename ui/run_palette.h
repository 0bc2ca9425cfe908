#pragma once

#include <QColor>

namespace scalelab {

// The colour of a run from its palette index (RunRecord::colour): ten well-separated colours
// (the Tableau 10 palette, readable on light and dark backgrounds), repeating after ten.
QColor run_colour(int index);

}  // namespace scalelab
