#pragma once

#include <QColor>
#include <QPalette>

class QApplication;
class QWidget;

namespace scalelab {

enum class Theme { Light, Dark };

// The colours of every widget in `theme`: Fusion's standard palette, or a dark one.
QPalette theme_palette(Theme theme);

// The theme a palette belongs to, from the lightness of its window colour; widgets that draw
// their own colours (charts, message labels) ask it of the application's palette.
Theme theme_of(const QPalette& palette);
Theme current_theme();

// Text colours for messages, readable on the theme's window and base colours (WCAG AA: a
// contrast ratio of at least 4.5:1).
QColor problem_colour(Theme theme);
QColor warning_colour(Theme theme);
QColor success_colour(Theme theme);

// Writes `label`'s text in the current theme's problem colour. Only the text's role is set, so
// every other role still follows the application's palette; call it again after a theme change.
void show_in_problem_colour(QWidget& label);

// Gives the whole application `theme`: the Fusion style (once) and the theme's palette. Every
// widget without a palette of its own follows the application's; widgets under a style sheet
// keep the palette they were polished with (Qt does not re-polish them), so each of them is
// polished again. Widgets that derive colours from the theme take them again on
// QEvent::PaletteChange (the application's palette reaching them), or on QEvent::StyleChange
// when under a style sheet.
void apply_theme(QApplication& app, Theme theme);

}  // namespace scalelab
